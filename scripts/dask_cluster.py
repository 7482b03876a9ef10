"""Start a Dask scheduler whose workers are SLURM (or PBS) jobs, print its address, keep it up.

    BIOCHUNK_ROOT=$PWD python scripts/dask_cluster.py --jobs 16 [--config configs/dask-slurm.yaml] [--kind slurm|pbs]

then, from the same checkout (docs/scale.md):

    dvc exp run -S compute.engine=dask -S compute.address=tcp://<this host>:8786 -S compute.partition_rows=4096

The cluster lives as long as this script (Ctrl-C ends it and cancels the jobs). The job
settings come from the dask-jobqueue config file given (configs/dask-slurm.yaml): the
stages only ever see ``compute.address``, so any other way of starting a scheduler
(``dask scheduler`` + ``dask worker`` by hand, Kubernetes, dask-cuda's ``LocalCUDACluster``
with one worker per GPU) serves as well.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import dask.config
import yaml

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, required=True, help="worker jobs to submit (one worker each)")
    ap.add_argument("--config", type=Path, default=ROOT / "configs" / "dask-slurm.yaml")
    ap.add_argument("--kind", choices=["slurm", "pbs"], default="slurm")
    args = ap.parse_args()
    # The file's keys are dask-jobqueue's; loading it here means no ~/.config/dask edits.
    dask.config.update(dask.config.config, yaml.safe_load(args.config.read_text()), priority="new")
    from dask_jobqueue import PBSCluster, SLURMCluster

    cluster = (SLURMCluster if args.kind == "slurm" else PBSCluster)()
    cluster.scale(jobs=args.jobs)
    print(f"scheduler: {cluster.scheduler_address}\ndashboard: {cluster.dashboard_link}", flush=True)
    print(cluster.job_script(), flush=True)
    try:
        while True:
            time.sleep(60)
    except KeyboardInterrupt:
        cluster.close()


if __name__ == "__main__":
    main()
