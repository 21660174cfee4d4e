"""Install a plug-in the way ``pip install`` leaves it: modules plus a dist-info with entry points."""

from __future__ import annotations

import shutil
from pathlib import Path


def install_distribution(site: Path, name: str, entry_points: str, *, modules: dict[str, str] | None = None,
                         packages: tuple[Path, ...] = ()) -> Path:
    """Write ``name``'s dist-info (METADATA, entry_points.txt) and code into the folder ``site``.

    Args:
        site: a folder that will be on ``sys.path``.
        name: the distribution name.
        entry_points: the text of ``entry_points.txt``.
        modules: module file name -> source, written into ``site``.
        packages: package folders copied into ``site``.

    Returns:
        The dist-info folder.
    """
    for file_name, source in (modules or {}).items():
        (site / file_name).write_text(source)
    for package in packages:
        shutil.copytree(package, site / package.name)
    dist = site / f"{name.replace('-', '_')}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(entry_points)
    return dist
