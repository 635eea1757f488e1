"""A pytest plugin that stands a large device in for a smaller one: MEMCAP_GB of device memory per process.

For acceptance checks only (scripts/memcap.sh): with this directory on PYTHONPATH and
PYTEST_PLUGINS=zl_memcap, every pytest process (zlcore's children, its warm workers'
sessions, FlagGems' own pytest) caps torch's caching allocator on device 0 at MEMCAP_GB
(decimal gigabytes) with torch.cuda.set_per_process_memory_fraction, before the suite
allocates anything, so zlcore and FlagGems alone meet the same limit. Unset or 0: no cap.
"""

import os


def pytest_configure(config):
    cap_gb = float(os.environ.get("MEMCAP_GB") or 0)
    if cap_gb <= 0:
        return
    import torch

    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, cap_gb * 1e9 / total), 0)
