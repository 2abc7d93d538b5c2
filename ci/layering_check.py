#!/usr/bin/env python3
"""The layering check (docs/ARCHITECTURE.md, "Layering"): no include from an earlier stage to a
later one, and every internal header of the analyzer and the reports in namespace tg::internal.

  python3 ci/layering_check.py [ROOT]      check the tree (default: this checkout); exit 1 on a break
  python3 ci/layering_check.py --self-test check the checker on planted breaks

What a stage may use comes from the CMake declarations, not from a second table: every
tracegate_stage(<target> <folder> [PUBLIC deps] [PRIVATE deps]) in analyzer/CMakeLists.txt and
reports/CMakeLists.txt gives a stage's folder and the targets it links; INTERFACE libraries
(tracegate_analyzer, tracegate_reports_headers) stand for the targets they link. A stage uses the
stages it links and, through them, what those link PUBLIC (as CMake passes usage requirements on).
A file belongs to the stage whose folder holds it (the longest match: analyzer/analysis/rules/ is
the rules stage, not analysis), a public header to the stage that PUBLIC_OWNER names. A file of
stage S may include, by its path from the repository root (#include "analyzer/...", "reports/...",
"tracegate/..."), a header of S or of a stage S uses; anything else is a break, reported as
file:line. Outside the stages: collector/ may include the analyzer and the collector's headers, not
reports/; cli/, python/, tests/ and kernels/ come last and may include anything.
"""
import os
import re
import sys

# Public headers and the stage each belongs to: the first stage whose files may include it (a
# header declaring what an earlier stage defines belongs to that stage: compare.h declares the
# document's ClassifyInput), or a tuple of sibling stages (import.h: each importer and import/).
# A new public header must be added here (the check fails naming it otherwise). "headers" is
# tracegate_analyzer_headers itself: vocabulary every stage may include.
PUBLIC_OWNER = {
    "tracegate/analyzer/types.h": "headers",
    "tracegate/analyzer/status.h": "headers",
    "tracegate/analyzer/strings.h": "tracegate_model",
    "tracegate/analyzer/quality.h": "tracegate_model",
    "tracegate/analyzer/model.h": "tracegate_model",
    "tracegate/analyzer/store.h": "tracegate_store",
    "tracegate/analyzer/import.h": ("tracegate_import_kineto", "tracegate_import_nsys", "tracegate_import"),
    "tracegate/analyzer/stats.h": "tracegate_stats",
    "tracegate/analyzer/significance.h": "tracegate_stats",
    "tracegate/analyzer/amdahl.h": "tracegate_analysis",
    "tracegate/analyzer/communication.h": "tracegate_analysis",
    "tracegate/analyzer/fusion.h": "tracegate_analysis",
    "tracegate/analyzer/gpu_specs.h": "tracegate_analysis",
    "tracegate/analyzer/idle_cause.h": "tracegate_host",
    "tracegate/analyzer/iteration_idle.h": "tracegate_analysis",
    "tracegate/analyzer/iterations.h": "tracegate_analysis",
    "tracegate/analyzer/kernel_class.h": "tracegate_analysis",
    "tracegate/analyzer/op_links.h": "tracegate_analysis",
    "tracegate/analyzer/predict.h": "tracegate_analysis",
    "tracegate/analyzer/replay.h": "tracegate_analysis",
    "tracegate/analyzer/critical_path.h": "tracegate_analysis",
    "tracegate/analyzer/roofline.h": "tracegate_analysis",
    "tracegate/analyzer/serving.h": "tracegate_analysis",
    "tracegate/analyzer/graph_capture.h": "tracegate_analysis",
    "tracegate/analyzer/summary.h": "tracegate_analysis",
    "tracegate/analyzer/findings.h": "tracegate_rules",
    "tracegate/analyzer/finding_replay.h": "tracegate_rules",
    "tracegate/analyzer/rules.h": "tracegate_rules",
    "tracegate/analyzer/analysis.h": "tracegate_pipeline",
    "tracegate/analyzer/cross_rank.h": "tracegate_ranks",
    "tracegate/analyzer/job_replay.h": "tracegate_job_replay",
    "tracegate/reports/report_read.h": "tracegate_document",
    "tracegate/reports/report_schema.h": "tracegate_document",
    "tracegate/reports/analysis_report.h": "tracegate_document",  # the key lists; the writer is report's
    "tracegate/reports/json_out.h": "tracegate_report",
    "tracegate/reports/report_html.h": "tracegate_view",  # HtmlEscape; the pages are html's
    "tracegate/reports/report_provenance.h": "tracegate_report",
    "tracegate/reports/chrome_export.h": "tracegate_export",
    "tracegate/reports/baseline.h": "tracegate_gate",
    "tracegate/reports/compare.h": "tracegate_document",  # ClassifyInput; the comparison is gate's
    "tracegate/reports/compare_html.h": "tracegate_html",
    "tracegate/reports/job.h": "tracegate_job",
    "tracegate/reports/analyze.h": "tracegate_analyze",
    "tracegate/reports/api.h": "tracegate_api",
}
PUBLIC_DIRS = {"tracegate/analyzer/": "analyzer/include/", "tracegate/reports/": "reports/include/"}
CMAKE_FILES = ["analyzer/CMakeLists.txt", "reports/CMakeLists.txt"]
SOURCE_EXT = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"((?:analyzer|reports|collector|tracegate)/[^"]+)"')


def parse_cmake(texts):
    """{target: (folder, public deps, private deps)} for stages; {target: deps} for INTERFACE libs."""
    stages, interfaces = {}, {}
    for base, text in texts:
        text = re.sub(r"#[^\n]*", "", text)
        for m in re.finditer(r"tracegate_stage\(([^)]*)\)", text):
            words = m.group(1).split()
            target, folder, public, private, into = words[0], words[1], [], [], None
            for w in words[2:]:
                if w in ("PUBLIC", "PRIVATE"):
                    into = public if w == "PUBLIC" else private
                elif w != "CUDA_FREE" and into is not None:
                    into.append(w)
            stages[target] = (base + folder.rstrip("/") + "/", public, private)
        for m in re.finditer(r"target_link_libraries\(\s*(\w+)\s+INTERFACE([^)]*)\)", text):
            interfaces.setdefault(m.group(1), []).extend(m.group(2).split())
    return stages, interfaces


def used_stages(stages, interfaces):
    """{stage: set of stages it may include}: its links, and what those pass on (PUBLIC)."""
    def expand(names, seen):
        out = set()
        for n in names:
            if n in seen:
                continue
            seen.add(n)
            if n in stages:
                out.add(n)
                out |= expand(stages[n][1], seen)  # a stage passes on what it links PUBLIC
            elif n in interfaces:
                out |= expand(interfaces[n], seen)
        return out

    uses = {}
    for target, (_, public, private) in stages.items():
        uses[target] = expand(public + private, set()) | {target, "headers"}
    return uses


def stage_of(path, stages):
    """The stage a repository path belongs to, "collector", "free" (may include anything) or None."""
    for prefix, owner in PUBLIC_DIRS.items():
        if path.startswith(owner):
            return PUBLIC_OWNER.get(prefix + path[len(owner) + len(prefix):], "unowned")
    best = None
    for target, (folder, _, _) in stages.items():
        if path.startswith(folder) and "/" not in path[len(folder):]:
            if best is None or len(folder) > len(stages[best][0]):
                best = target
    if best:
        return best
    if path.startswith("collector/"):
        return "collector"
    if path.startswith(("cli/", "python/", "tests/", "kernels/")):
        return "free"
    return None


def header_stage(inc, stages):
    """The stage an included path belongs to (public headers by PUBLIC_OWNER)."""
    if inc.startswith(tuple(PUBLIC_DIRS)):
        return PUBLIC_OWNER.get(inc, "unowned")
    if inc.startswith("collector/"):
        return "collector"
    return stage_of(inc, stages)


def check_includes(files, stages, uses):
    problems = []
    analyzer = {t for t, (folder, _, _) in stages.items() if folder.startswith("analyzer/")} | {"headers"}
    for path, text in sorted(files.items()):
        if path.startswith(tuple(PUBLIC_DIRS.values())) and path.endswith(".h"):
            rel = path.split("/include/", 1)[1]
            if rel not in PUBLIC_OWNER:
                problems.append(f"{path}:1: public header without a stage: add it to PUBLIC_OWNER in "
                                f"ci/layering_check.py")
                continue
        own = stage_of(path, stages)
        if own in (None, "free", "unowned"):
            continue
        if own == "collector":
            allowed = analyzer | {"collector"}
        else:  # a public header of sibling stages may include what any of them uses
            allowed = set().union(*(uses.get(o, {o, "headers"}) for o in (own if isinstance(own, tuple) else (own,))))
        for n, line in enumerate(text.split("\n"), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            inc = m.group(1)
            to = header_stage(inc, stages)
            owners = to if isinstance(to, tuple) else (to,)
            if to is None or own == to or any(o in allowed for o in owners):
                continue
            to = " or ".join(owners)
            what = "a public header no stage owns" if to == "unowned" else to
            own_name = " or ".join(own) if isinstance(own, tuple) else own
            problems.append(f"{path}:{n}: {own_name} includes \"{inc}\" ({what}), which it does not use: "
                            f"an earlier stage may not include a later one")
    return problems


def check_namespaces(files):
    """Internal headers of analyzer/ and reports/ declare their names in tg::internal."""
    problems = []
    for path, text in sorted(files.items()):
        if not path.startswith(("analyzer/", "reports/")) or "/include/" in path or not path.endswith(".h"):
            continue
        depth = 0
        for n, line in enumerate(text.split("\n"), 1):
            code = re.sub(r"//.*", "", line)
            m = re.match(r"\s*namespace\s+([\w:]+)\s*\{", code)
            if m and depth == 0 and m.group(1) != "tg::internal" and not m.group(1).startswith("tg::internal::"):
                problems.append(f"{path}:{n}: internal header opens namespace {m.group(1)}, not tg::internal")
            depth += code.count("{") - code.count("}")
    return problems


def read_tree(root):
    files = {}
    for top in ("analyzer", "reports", "collector", "cli", "python", "tests", "kernels"):
        for dirpath, dirnames, names in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "build"]
            for name in names:
                if name.endswith(SOURCE_EXT):
                    full = os.path.join(dirpath, name)
                    with open(full, encoding="utf-8", errors="replace") as f:
                        files[os.path.relpath(full, root)] = f.read()
    return files


def run(root, files):
    texts = []
    for c in CMAKE_FILES:
        with open(os.path.join(root, c), encoding="utf-8") as f:
            texts.append((os.path.dirname(c) + "/", f.read()))
    stages, interfaces = parse_cmake(texts)
    if not stages:
        return ["no tracegate_stage() found in " + ", ".join(CMAKE_FILES)]
    return check_includes(files, stages, used_stages(stages, interfaces)) + check_namespaces(files)


def self_test(root):
    """Plants one break of each kind in a copy of the tree (in memory) and expects each reported."""
    files = read_tree(root)
    base = run(root, files)
    planted = {
        "analyzer/util/intervals.h": '#include "tracegate/analyzer/model.h"',    # util -> model
        "analyzer/model/model.cpp": '#include "analyzer/analysis/correlation.h"',  # model -> analysis
        "analyzer/analysis/summary.cpp": '#include "reports/view/report_view.h"',  # analyzer -> reports
        "reports/document/report_document.cpp": '#include "reports/view/page_assets.h"',  # document -> html
        "reports/export/chrome_export.cpp": '#include "analyzer/import/kineto/kineto_vocab.h"',  # not linked
        "collector/src/parts.cpp": '#include "tracegate/reports/compare.h"',  # collector -> reports
        "analyzer/include/tracegate/analyzer/model.h": '#include "tracegate/analyzer/analysis.h"',
    }
    failed = 0
    for path, line in planted.items():
        if path not in files:
            print(f"self-test: {path} is not in the tree")
            failed += 1
            continue
        bad = dict(files)
        bad[path] = line + "\n" + files[path]
        found = [p for p in run(root, bad) if p not in base and p.startswith(path + ":1:")]
        if not found:
            print(f"self-test: the planted {line} in {path} was not reported")
            failed += 1
    bad = dict(files)
    bad["reports/gate/planted.h"] = "#pragma once\nnamespace tg {\nint Planted();\n}  // namespace tg\n"
    if not any(p.startswith("reports/gate/planted.h:2:") for p in run(root, bad)):
        print("self-test: a planted internal header in namespace tg was not reported")
        failed += 1
    bad = dict(files)
    bad["analyzer/include/tracegate/analyzer/planted.h"] = "#pragma once\n"
    if not any(p.startswith("analyzer/include/tracegate/analyzer/planted.h:1:") for p in run(root, bad)):
        print("self-test: a public header without a stage was not reported")
        failed += 1
    print(f"layering self-test: {len(planted) + 2 - failed} of {len(planted) + 2} planted breaks reported")
    return 1 if failed else 0


def main(argv):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test(argv[2] if len(argv) > 2 else here)
    root = argv[1] if len(argv) > 1 else here
    problems = run(root, read_tree(root))
    for p in problems:
        print(p)
    if problems:
        print(f"layering: {len(problems)} break(s); docs/ARCHITECTURE.md (\"Layering\") gives the rules")
        return 1
    print("layering: every include goes from a stage to one it uses; internal headers in tg::internal")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
