"""A visibility variable already set in zlcore's environment restricts
the devices the backend offers: run picks within it, batch runs only there,
and both say so. Recorded nvidia-smi output (8 H200s) for cuda; the fake
multi-device backend (FAKE_VISIBLE_DEVICES) for runs that measure."""
import csv
import json

from conftest import PY, SRC, SUITE, VENDOR, clean_env, fake_tool, identity, zl

SMI_8 = SRC / "plugins" / "backend-cuda" / "testdata" / "smi_h200_8gpu.txt"
GPU3 = "GPU-a3c7e145-9b02-6d8f-c4e1-72b09f5a1d36"


def cuda_env(tmp_path, **more):
    smi = fake_tool(tmp_path / "nvidia-smi", SMI_8)
    return clean_env(tmp_path, ZL_CUDA_NO_NVML="1", ZL_CUDA_SMI=str(smi), **more)


def test_devices_marks_what_a_pin_leaves_out(tmp_path):
    r = zl(tmp_path, "devices", "--backend", "cuda", "--json", env=cuda_env(tmp_path, CUDA_VISIBLE_DEVICES="3,5"))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [d["index"] for d in doc["devices"] if d["visible"]] == [3, 5]
    assert len(doc["devices"]) == 8
    assert doc["pinned_by_env"] == {"CUDA_VISIBLE_DEVICES": "3,5"}
    # A pin that names no device is one line, exit 2.
    r = zl(tmp_path, "devices", "--backend", "cuda", env=cuda_env(tmp_path, CUDA_VISIBLE_DEVICES="9"))
    assert r.returncode == 2
    assert "CUDA_VISIBLE_DEVICES=9 is set in zlcore's environment, but cuda reports no device '9'" in r.stderr


def test_run_stays_within_a_cuda_pin_given_by_uuid(tmp_path):
    # The stub torch passes the interpreter check (a cuda run needs torch);
    # the device choice and the identity are made before the child starts
    # and are what this checks, whatever the child does next.
    stubs = SRC / "tests" / "support" / "stubs" / "gpu"
    r = zl(tmp_path, "run", "--backend", "cuda", "--timer", "host", "--flaggems-dir", SUITE, "--op", "abs",
           "--python", PY, "--out", tmp_path / "r",
           env=cuda_env(tmp_path, CUDA_VISIBLE_DEVICES=GPU3, PYTHONPATH=stubs))
    ident = identity(tmp_path / "r")
    assert ident["device"]["index"] == 3, r.stdout + r.stderr
    assert ident["device"]["visibility"] == {"CUDA_VISIBLE_DEVICES": GPU3}
    assert ident["device"]["pinned_by_env"] == {"CUDA_VISIBLE_DEVICES": GPU3}
    assert ident["env_choices"]["CUDA_VISIBLE_DEVICES"] == GPU3
    assert f"device pin   CUDA_VISIBLE_DEVICES={GPU3} was already set: only device(s) 3 offered" in r.stdout


def test_run_and_batch_within_a_fake_pin(tmp_path):
    env = clean_env(tmp_path, FAKE_VISIBLE_DEVICES="1,3", ZL_FAKE_DEVICE_COUNT="4")
    common = ["--backend", "fakegpu", "--timer", "host", "--flaggems-dir", SUITE, "--python", PY, "--dtypes", "float32"]
    r = zl(tmp_path, "--backend-dir", VENDOR, "run", *common, "--op", "abs", "--out", tmp_path / "r", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert identity(tmp_path / "r")["device"]["index"] == 1  # the first offered, not 0
    r = zl(tmp_path, "--backend-dir", VENDOR, "run", *common, "--op", "abs", "--device", "0", "--out", tmp_path / "r0",
           env=env)
    assert r.returncode == 2
    assert r.stderr == ("zlcore: --device 0 is not a fakegpu device within FAKE_VISIBLE_DEVICES=1,3 "
                        "(set in zlcore's environment); valid: 1, 3\n")

    r = zl(tmp_path, "--backend-dir", VENDOR, "batch", *common, "--ops", "abs,add,mul,exp", "--out", tmp_path / "b",
           env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("devices: FAKE_VISIBLE_DEVICES=1,3 is set in this environment: "
                               "the batch uses only device(s) 1,3\n")
    with open(tmp_path / "b" / "ops_status.csv") as f:
        assert {row["device_index"] for row in csv.DictReader(f)} <= {"1", "3"}
    batch_id = json.loads((tmp_path / "b" / "batch_identity.json").read_text())
    assert [d["index"] for d in batch_id["devices"]] == [1, 3]
    assert batch_id["options"]["env:FAKE_VISIBLE_DEVICES"] == "1,3"
    r = zl(tmp_path, "--backend-dir", VENDOR, "batch", *common, "--ops", "abs", "--devices", "0",
           "--out", tmp_path / "b0", env=env)
    assert r.returncode == 2 and "device 0 does not exist (valid: 1,3)" in r.stderr
