"""Makes the seed corpora of the fuzz harnesses from real files: a project captured from the test
model basic_block.pt on the CPU, searched compile-only for two cards (real built-in sources and
launch plans), two nodes marked passed by hand, and exported as a kernels-only .cast package.

Usage: make_seeds.py KFORGE_BIN MODELS_DIR OUT
Writes OUT/corpus/<harness>/ and OUT/<harness>.dict (the JSON keys of the seeds, for -dict=)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

MARKER = b"\n--kforge-fuzz-entry:"


def kforge(binary, *args):
    result = subprocess.run([binary, *args], capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        sys.exit("make_seeds: kforge %s failed: %s" % (args[0], result.stderr.strip()))
    return result.stdout


def mark_passed(node, median_us, eager_us):
    """What the evaluator stores for a candidate that passed on a GPU (as tests/cli/test_export.py)."""
    node["status"] = "passed"
    node["failure_reason"] = ""
    node["latency"] = {"median_us": median_us, "q1_us": median_us * 0.98, "q3_us": median_us * 1.02}
    node["eager_us"] = eager_us
    node["speedup"] = eager_us / median_us
    details = node["evaluation_details"]
    details["status"] = "passed"
    details.pop("reason", None)
    details["evaluation"] = {"status": "passed", "validated_input_sets": 4,
                             "timing": {"method": "cupti kernel activity, L2 flushed",
                                        "candidate": {"median_us": median_us, "q1_us": median_us * 0.98,
                                                      "q3_us": median_us * 1.02}},
                             "checks": [{"name": "sample call-0: output 0", "passed": True, "detail": "max error 0"}]}


def keys_of(value, keys):
    if isinstance(value, dict):
        for k, v in value.items():
            keys.add(k)
            keys_of(v, keys)
    elif isinstance(value, list):
        for v in value:
            keys_of(v, keys)


def write_dict(path, keys):
    with open(path, "w") as f:
        for k in sorted(keys):
            if k and all(32 <= ord(c) < 127 and c not in '"\\' for c in k):
                f.write('"\\"%s\\""\n' % k)


def main():
    binary, models, out = sys.argv[1:4]
    tmp = tempfile.mkdtemp(prefix="kforge_fuzz_seeds_")
    try:
        project = os.path.join(tmp, "p")
        cards = json.loads(kforge(binary, "capture", os.path.join(models, "basic_block.pt"), "--inputs", "2x8x8x8",
                                  "-o", project, "--device", "cpu", "--quiet", "--json"))["cards"]
        by_op = {c["op"]: c["id"] for c in cards}
        searched = [by_op["aten::relu"], by_op["aten::batch_norm"]]
        kforge(binary, "optimize", project, "--cards", *searched, "--iterations", "3")
        for card in searched:
            path = os.path.join(project, "search", card, "tree.json")
            with open(path) as f:
                tree = json.load(f)
            mark_passed(tree["nodes"][0], 5.0, 10.0)
            with open(path, "w") as f:
                json.dump(tree, f, indent=1)
        package = os.path.join(tmp, "kernels.cast")
        kforge(binary, "export", project, "-o", package, "--sanitize", "off", "--no-model")

        corpora = {h: os.path.join(out, "corpus", h) for h in ("cast_reader", "project_json", "search_tree")}
        for d in corpora.values():
            os.makedirs(d, exist_ok=True)
        keys = {h: set() for h in corpora}

        # .cast: the package as is, and as sealed entries with HEADER.json's digest zeroed.
        shutil.copy(package, os.path.join(corpora["cast_reader"], "kernels.cast"))
        entries = b"E"
        with zipfile.ZipFile(package) as z:
            for name in z.namelist():
                data = z.read(name)
                if name == "checksums.sha256":
                    continue
                if name == "HEADER.json":
                    header = json.loads(data)
                    data = data.replace(header["checksums_sha256"].encode(), b"0" * 64)
                if name.endswith(".json"):
                    keys_of(json.loads(data), keys["cast_reader"])
                elif len(data) > 256:
                    # Code is opaque to the reader: a short stand-in keeps every run fast.
                    data = data[:256]
                entries += MARKER + name.encode() + b"\n" + data
        with open(os.path.join(corpora["cast_reader"], "kernels.entries"), "wb") as f:
            f.write(entries)

        # Project files: project.json NUL cards.json, and cards.json alone.
        with open(os.path.join(project, "project.json"), "rb") as f:
            project_json = f.read()
        with open(os.path.join(project, "cards.json"), "rb") as f:
            cards_json = f.read()
        for name, data in (("project_and_cards", project_json + b"\0" + cards_json), ("cards", cards_json)):
            with open(os.path.join(corpora["project_json"], name), "wb") as f:
                f.write(data)
        keys_of(json.loads(project_json), keys["project_json"])
        keys_of(json.loads(cards_json), keys["project_json"])

        for card in searched:
            with open(os.path.join(project, "search", card, "tree.json"), "rb") as f:
                tree = f.read()
            with open(os.path.join(corpora["search_tree"], card + ".json"), "wb") as f:
                f.write(tree)
            keys_of(json.loads(tree), keys["search_tree"])

        for harness, found in keys.items():
            write_dict(os.path.join(out, harness + ".dict"), found)
        sizes = {h: sum(os.path.getsize(os.path.join(d, n)) for n in os.listdir(d)) for h, d in corpora.items()}
        print("make_seeds: corpus bytes " + ", ".join("%s %d" % kv for kv in sorted(sizes.items())))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
