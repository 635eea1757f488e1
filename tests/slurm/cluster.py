"""A throw-away one-node Slurm cluster on localhost for the tests.

munged, slurmctld and slurmd from Debian's packages (slurm-wlm, munge), with
every state, spool, log, pid and socket path under one temp directory, so it
touches nothing of the machine's own (no /etc/munge, no /etc/slurm). The
node's CPUs are the resources; jobs run as root (SlurmUser=root), which is
why the daemons need root. What a one-node cluster needs is listed in
docs/slurm.md ("Tests") and in start() below.
"""

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ["munged", "slurmctld", "slurmd"]
CLIENTS = ["sbatch", "squeue", "scancel", "sinfo"]
GPUS = 4
GPU_FILES = "/dev/tty[1-4]"


def _which(name):
    return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def cannot_run():
    """Why this machine cannot run the daemons; None when it can."""
    missing = [n for n in DAEMONS + CLIENTS if not _which(n)]
    if missing:
        return "Slurm/munge not installed (missing " + ", ".join(missing) + "; run: bash scripts/install-deps.sh slurm)"
    if os.geteuid() != 0:
        return "not root: slurmd and SlurmUser=root need root"
    return None


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self, root):
        self.root = Path(root)
        self.host = socket.gethostname().split(".")[0]
        self.conf = self.root / "slurm.conf"
        self.munge_socket = self.root / "munge" / "munge.socket.2"
        self.pid_files = {
            "munged": self.root / "munge" / "munged.pid",
            "slurmctld": self.root / "run" / "slurmctld.pid",
            "slurmd": self.root / "run" / "slurmd.pid",
        }
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))

    def log_tail(self, lines=30):
        out = []
        for name in ["munged.log", "slurmctld.log", "slurmd.log"]:
            path = self.root / "log" / name
            if path.exists():
                out.append(f"--- {name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
        return "\n".join(out)

    def start(self):
        for d in ["munge", "state", "spool", "log", "run"]:
            (self.root / d).mkdir(parents=True, exist_ok=True)
        os.chmod(self.root / "munge", 0o700)
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        # --force: munged refuses root and lax log-dir ownership otherwise.
        subprocess.run([_which("munged"), "--force", "--socket", str(self.munge_socket), "--key-file", str(key),
                        "--pid-file", str(self.pid_files["munged"]),
                        "--log-file", str(self.root / "log" / "munged.log"),
                        "--seed-file", str(self.root / "munge" / "munged.seed")],
                       check=True, capture_output=True, timeout=30)
        ctld_port, slurmd_port = _free_port(), _free_port()
        self.conf.write_text(f"""# written by tests/slurm/cluster.py
ClusterName=zltest
SlurmctldHost={self.host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
CredType=cred/munge
MpiDefault=none
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
StateSaveLocation={self.root / 'state'}
SlurmdSpoolDir={self.root / 'spool'}
SlurmctldPidFile={self.pid_files['slurmctld']}
SlurmdPidFile={self.pid_files['slurmd']}
SlurmctldLogFile={self.root / 'log' / 'slurmctld.log'}
SlurmdLogFile={self.root / 'log' / 'slurmd.log'}
SlurmctldDebug=info
SlurmdDebug=info
KillWait=10
MinJobAge=300
SchedulerParameters=sched_interval=1
GresTypes=gpu
NodeName={self.host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} Gres=gpu:{GPUS} State=UNKNOWN
PartitionName=zltest Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        # Four pretend GPUs, so that Slurm hands out GPU ids (SLURM_JOB_GPUS)
        # the way it does on a GPU node; the files only have to exist.
        (self.root / "gres.conf").write_text(
            f"AutoDetect=off\nNodeName={self.host} Name=gpu File={GPU_FILES}\n")
        subprocess.run([_which("slurmctld"), "-c"], env=self.env, check=True, capture_output=True, timeout=30)
        subprocess.run([_which("slurmd")], env=self.env, check=True, capture_output=True, timeout=30)
        deadline = time.time() + 60
        state = ""
        while time.time() < deadline:
            r = subprocess.run([_which("sinfo"), "-h", "-o", "%t"], env=self.env, capture_output=True, text=True)
            state = r.stdout.strip()
            if state in ("idle", "mix", "alloc"):
                return
            time.sleep(0.5)
        raise RuntimeError(f"the node did not come up (sinfo: {state!r})\n" + self.log_tail())

    def stop(self):
        """Stops the daemons by the pids in their pid files, slurmd first."""
        for name in ["slurmd", "slurmctld", "munged"]:
            path = self.pid_files[name]
            try:
                pid = int(path.read_text().strip())
            except (OSError, ValueError):
                continue
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            deadline = time.time() + 10
            while time.time() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)
            else:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
