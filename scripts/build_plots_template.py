"""Build the offline HTML template for `dvc plots show`: vega, vega-lite and vega-embed inlined.

DVC's default page loads the three libraries from a CDN, so plots render blank without
network. This script fetches the pinned npm packages with `npm pack` (the npm registry
is the only network it needs), and writes one self-contained HTML template with the
libraries inlined and their BSD-3-Clause notices kept. The built file is committed
(`.dvc/plots/offline.html`, named by `plots.html_template` in `.dvc/config`), so a fresh
clone renders plots offline with no npm; rerun this (`make plots-template`) to upgrade.

    python scripts/build_plots_template.py --out .dvc/plots/offline.html
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tarfile
import tempfile
from pathlib import Path

# (package, version, the UMD build that defines the global the next one needs)
PACKAGES = [
    ("vega", "5.33.1", "build/vega.min.js"),
    ("vega-lite", "5.23.0", "build/vega-lite.min.js"),
    ("vega-embed", "6.29.0", "build/vega-embed.min.js"),
]
# The vega package ships no LICENSE file; its package.json says BSD-3-Clause, under the
# same copyright holder as vega-lite and vega-embed, whose LICENSE text is reused for it.
HOLDER = "University of Washington Interactive Data Lab"

PAGE = """<!DOCTYPE html>
<!-- biochunk offline template for `dvc plots show` (built by scripts/build_plots_template.py).
     It inlines {libs}; DVC's scripts placeholder is left out on purpose, so
     no CDN <script src> is ever added. Notices of the inlined libraries:

{notices}
-->
<html>
<head>
    {{refresh_tag}}
    <meta charset="utf-8">
    <title>DVC Plot</title>
{scripts}
    <style>
        table {{ border-spacing: 15px; }}
    </style>
</head>
<body>
    {{plot_divs}}
</body>
</html>
"""


def fetch(workdir: Path) -> dict[str, Path]:
    specs = [f"{name}@{version}" for name, version, _ in PACKAGES]
    out = subprocess.run(["npm", "pack", "--json", *specs], cwd=workdir, check=True, capture_output=True, text=True).stdout
    roots = {}
    for entry, (name, _, _) in zip(json.loads(out), PACKAGES):
        root = workdir / name
        with tarfile.open(workdir / entry["filename"]) as tar:
            tar.extractall(root, filter="data")
        roots[name] = root / "package"
    return roots


def build(roots: dict[str, Path]) -> str:
    licence_text = next((roots[n] / "LICENSE").read_text() for n, _, _ in PACKAGES if (roots[n] / "LICENSE").exists())
    notices, scripts = [], []
    for name, version, build_file in PACKAGES:
        lic = roots[name] / "LICENSE"
        text = lic.read_text() if lic.exists() else licence_text
        assert HOLDER in text, f"{name}: unexpected licence holder"
        notices.append(f"{name} {version} (BSD-3-Clause):\n{text.strip()}".replace("--", "- -"))
        js = (roots[name] / build_file).read_text()
        if "</script" in js:
            raise SystemExit(f"{name}: the build contains </script and cannot be inlined")
        scripts.append(f'    <script type="text/javascript">/* {name} {version} */\n{js}\n    </script>')
    libs = ", ".join(f"{n} {v}" for n, v, _ in PACKAGES)
    return PAGE.format(libs=libs, notices="\n\n".join(notices), scripts="\n".join(scripts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(".dvc/plots/offline.html"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        page = build(fetch(Path(tmp)))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(page)
    print(f"wrote {args.out} ({len(page) / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
