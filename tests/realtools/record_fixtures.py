"""Record the ibnetdiscover fixtures of ``tests/data`` from real tools.

Run ``python -m tests.realtools.record_fixtures`` (needs ibsim, opensm, infiniband-diags).
Each fixture is real ``ibnetdiscover`` output against ibsim after ``opensm -o``
assigned the LIDs; the ``broken_*`` files are one-line edits of a real one, one
per error the parser must report with its line number.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from fabric_engine.formats import ibsim as ibsim_format
from fabric_engine.topology.generate import dragonfly_plus, fat_tree
from tests.realtools.ibsim import IbSim

DATA = Path(__file__).resolve().parents[1] / "data"

#: Hand-written net: SHARP aggregation nodes (one per switch, same description), a host
#: with two single-port HCAs, a dual-port HCA with one port unconnected, mixed widths/speeds.
SHARP_NET = """\
switchguid=0x0c42a10300aa0001
Switch\t8 "sw1"\t\t# "MF0;sw1:MQM8700/U1" enhanced port 0 lid 0 lmc 0
[1]\t"node01a"[1]\t\t# "node01 HCA-1" lid 0 4xHDR
[2]\t"node01b"[1]\t\t# "node01 HCA-2" lid 0 4xHDR
[3]\t"dual"[1]\t\t# "stor01 HCA-1" lid 0 2xEDR
[5]\t"sw2"[5]\t\t# "MF0;sw2:MQM8700/U1" lid 0 4xHDR
[6]\t"sw2"[6]\t\t# "MF0;sw2:MQM8700/U1" lid 0 4xHDR
[8]\t"an1"[1]\t\t# "Mellanox Technologies Aggregation Node" lid 0 4xHDR

switchguid=0x0c42a10300aa0002
Switch\t8 "sw2"\t\t# "MF0;sw2:MQM8700/U1" enhanced port 0 lid 0 lmc 0
[1]\t"gpu7"[1]\t\t# "gpu7 mlx5_0" lid 0 4xEDR
[5]\t"sw1"[5]\t\t# "MF0;sw1:MQM8700/U1" lid 0 4xHDR
[6]\t"sw1"[6]\t\t# "MF0;sw1:MQM8700/U1" lid 0 4xHDR
[8]\t"an2"[1]\t\t# "Mellanox Technologies Aggregation Node" lid 0 4xHDR

caguid=0x0c42a10300bb0010
Hca\t1 "node01a"\t\t# "node01 HCA-1"
[1]\t"sw1"[1]\t\t# lid 0 lmc 0 "MF0;sw1:MQM8700/U1" lid 0 4xHDR

caguid=0x0c42a10300bb0020
Hca\t1 "node01b"\t\t# "node01 HCA-2"
[1]\t"sw1"[2]\t\t# lid 0 lmc 0 "MF0;sw1:MQM8700/U1" lid 0 4xHDR

caguid=0x0c42a10300bb0030
Hca\t2 "dual"\t\t# "stor01 HCA-1"
[1]\t"sw1"[3]\t\t# lid 0 lmc 0 "MF0;sw1:MQM8700/U1" lid 0 2xEDR

caguid=0x0c42a10300bb0040
Hca\t1 "gpu7"\t\t# "gpu7 mlx5_0"
[1]\t"sw2"[1]\t\t# lid 0 lmc 0 "MF0;sw2:MQM8700/U1" lid 0 4xEDR

caguid=0x0c42a10300cc0010
Hca\t1 "an1"\t\t# "Mellanox Technologies Aggregation Node"
[1]\t"sw1"[8]\t\t# lid 0 lmc 0 "MF0;sw1:MQM8700/U1" lid 0 4xHDR

caguid=0x0c42a10300cc0020
Hca\t1 "an2"\t\t# "Mellanox Technologies Aggregation Node"
[1]\t"sw2"[8]\t\t# lid 0 lmc 0 "MF0;sw2:MQM8700/U1" lid 0 4xHDR
"""


def discover(net: str, sim_host: str, workdir: Path) -> str:
    with IbSim(workdir, net, sim_host=sim_host) as sim:
        sim.run_opensm(["-o"], cache_dir=workdir / "osm")
        text = sim.run(["ibnetdiscover"]).stdout
    # The date line differs on every run; keep the fixture stable.
    return re.sub(r"generated on .*", "generated on <date>", text)


def _replace_once(text: str, pattern: str, repl: str) -> str:
    new, n = re.subn(pattern, repl, text, count=1, flags=re.M)
    assert n == 1, pattern
    return new


def main() -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        fat = fat_tree(hosts=8, radix=8, speed="HDR", storage_servers=2, mgmt_nodes=1, name="ft2")
        ft_text = discover(ibsim_format.write(fat, preset_lids=False), "gpu0001", tmp / "ft2")
        (DATA / "ibnd_fat_tree_2l.txt").write_text(ft_text)
        dfp = dragonfly_plus(groups=3, leaves_per_group=2, spines_per_group=2, hosts_per_leaf=2, radix=8,
                             speed="HDR")
        (DATA / "ibnd_dragonfly_plus.txt").write_text(discover(ibsim_format.write(dfp), "gpu0001", tmp / "dfp"))
        (DATA / "ibnd_sharp_multi_hca.txt").write_text(discover(SHARP_NET, "node01a", tmp / "sharp"))
    # Broken variants of the real 2-level fat tree, one defect each.
    lines = ft_text.splitlines(keepends=True)
    port_at = next(i for i, ln in enumerate(lines) if ln.startswith("[") and "4xHDR" in ln)
    (DATA / "broken_truncated.txt").write_text("".join(lines[:port_at]) + lines[port_at][:12])
    (DATA / "broken_unknown_speed.txt").write_text(_replace_once(ft_text, r"4xHDR$", "4xZDR"))
    (DATA / "broken_port_above_count.txt").write_text(
        _replace_once(ft_text, r'^\[1\](\([0-9a-f]+\) \t"S-)', r"[3]\1"))
    (DATA / "broken_unconfirmed_link.txt").write_text(
        _replace_once(ft_text, r'^(\[\d+\]\t"S-[0-9a-f]+")\[(\d+)\]', r"\g<1>[7]"))
    guids = re.findall(r"^caguid=(0x[0-9a-f]+)$", ft_text, flags=re.M)
    (DATA / "broken_duplicate_guid.txt").write_text(
        _replace_once(ft_text, rf"^caguid={guids[1]}$", f"caguid={guids[0]}"))


if __name__ == "__main__":
    main()
