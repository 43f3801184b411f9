"""The digital twin of a telemetry-fed fabric: jobs from the scheduler, expected against observed, the plan.

==========================  ===========================================================
module                      what it does
==========================  ===========================================================
:mod:`.hostlist`            Slurm hostlist expressions, counted before they are expanded
:mod:`.slurm`               ``squeue --json`` / ``scontrol show job --json`` -> jobs
:mod:`.hostmap`             node descriptions -> host name and rail
:mod:`.catalog`             jobs placed on the fabric's HCAs; the emulator's workload for them
:mod:`.attribution`         links each job can use; each job's observed bandwidth; jobs on a link
:mod:`.expected`            the emulation of the known jobs; expected against observed per link
:mod:`.persistence`         the persistence rule: deviations -> alerts
:mod:`.collectives`         algbw and busbw in nccl-tests terms
:mod:`.plan`                designed cabling (CSV or topology file) against the discovered fabric
:mod:`.whatif`              what-if from the live state (failed cable or switch, other engine)
:mod:`.monitor`             :class:`Twin`, all of it kept from tick to tick for one fabric
==========================  ===========================================================
"""

from .catalog import KnownJob, place_jobs, workload_jobs
from .collectives import bus_factor, figures_from_rate, figures_from_time
from .expected import Thresholds, compare, emulate
from .hostlist import expand_hostlist, hostlist_size
from .hostmap import HostMap
from .monitor import Twin, TwinReport
from .persistence import DeviationTracker
from .plan import Plan, PlanReport, compare_plan, read_plan, read_plan_csv
from .slurm import SchedulerJob, parse_slurm_jobs
from .whatif import live_what_if

__all__ = [
    "KnownJob", "place_jobs", "workload_jobs", "bus_factor", "figures_from_rate", "figures_from_time", "Thresholds",
    "compare", "emulate", "expand_hostlist", "hostlist_size", "HostMap", "Twin", "TwinReport", "DeviationTracker",
    "Plan", "PlanReport", "compare_plan", "read_plan", "read_plan_csv", "SchedulerJob", "parse_slurm_jobs",
    "live_what_if",
]
