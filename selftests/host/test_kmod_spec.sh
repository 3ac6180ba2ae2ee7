#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Documentation/meter.yaml (the genetlink YAML spec of the "meter" family)
# says the same as include/uapi/linux/meter.h: family name and version,
# every command in order with its value, every attribute of every set in
# order, the page limits it names.  Skips when python3-yaml is missing.
set -u
# The repository: METER_ROOT, else the first parent of this script that
# holds the header (run from selftests/host/ or build/selftests/host/).
ROOT=${METER_ROOT:-}
if [ -z "$ROOT" ]; then
	ROOT=$(dirname "$(readlink -f "$0")")
	while [ "$ROOT" != / ] && [ ! -f "$ROOT/include/uapi/linux/meter.h" ]; do
		ROOT=$(dirname "$ROOT")
	done
fi
if ! python3 -c 'import yaml' 2>/dev/null; then
	echo "1..0 # SKIP python3-yaml not installed"
	exit 4
fi
exec python3 - "$ROOT/include/uapi/linux/meter.h" "$ROOT/Documentation/meter.yaml" <<'PY'
import re
import sys

import yaml

hdr = open(sys.argv[1]).read()
spec = yaml.safe_load(open(sys.argv[2]))
n = 0
failed = 0


def ok(cond, name):
    global n, failed
    n += 1
    print(("ok" if cond else "not ok") + " %d - %s" % (n, name))
    if not cond:
        failed += 1


def enum(name):
    """Names of an enum of the header, in order, without __*_MAX."""
    body = re.search(r"enum %s \{(.*?)\};" % name, hdr, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    out = []
    for item in body.split(","):
        item = item.strip()
        if not item or item.startswith("__"):
            continue
        out.append(item.split("=")[0].strip())
    return out


def define(name):
    val = re.search(r"#define %s\s+([^\n]*)" % name, hdr).group(1)
    return re.sub(r"/\*.*", "", val).strip()


def yname(cname, prefix):
    return cname[len(prefix):].lower().replace("_", "-")


sets = {s["name"]: s for s in spec["attribute-sets"]}

ok(spec["name"] == define("METER_GENL_NAME").strip('"'),
   "family name is the header's METER_GENL_NAME")
ok(spec["protocol"] == "genetlink", "genetlink protocol")

cmds = [yname(c, "METER_CMD_") for c in enum("meter_cmd")][1:]
ops = [o["name"] for o in spec["operations"]["list"]]
ok(ops == cmds, "operations are the header's commands in order (%s)" %
   ", ".join(ops))
ok(spec["operations"]["list"][0].get("value") == 1,
   "operation values start at 1 like METER_CMD_REGISTER")

for setname, cenum, prefix in (("meter", "meter_attr", "METER_A_"),
                               ("func", "meter_func_attr", "METER_A_FUNC_"),
                               ("stack", "meter_stack_attr", "METER_A_STACK_"),
                               ("thread", "meter_thread_attr",
                                "METER_A_THREAD_")):
    want = [yname(c, prefix) for c in enum(cenum)]
    got = [a["name"] for a in sets[setname]["attributes"]]
    ok(got == want, "attribute set %s matches enum %s (%d attributes)" %
       (setname, cenum, len(want)))

consts = {d["name"]: d.get("value") for d in spec["definitions"]
          if d["type"] == "const"}
ok(str(consts.get("funcs-max")) == str(eval(define("METER_FUNCS_MAX")
                                             .replace("U", ""))),
   "funcs-max is METER_FUNCS_MAX")
period = [a for a in sets["meter"]["attributes"] if a["name"] == "period-ns"][0]
ok(period["checks"]["min"] == int(define("METER_PERIOD_MIN_NS").rstrip("ULL"))
   and period["checks"]["max"] == int(define("METER_PERIOD_MAX_NS")
                                      .rstrip("ULL")),
   "period-ns checks are METER_PERIOD_MIN_NS..METER_PERIOD_MAX_NS")
members = [m["name"] for m in [d for d in spec["definitions"]
                               if d["name"] == "call-counts"][0]["members"]]
body = re.search(r"struct meter_call_counts \{(.*?)\};", hdr, re.S).group(1)
cmembers = [re.sub(r"\W", "", l.split()[1]).replace("_", "-")
            for l in re.sub(r"/\*.*?\*/", "", body, flags=re.S).split(";")
            if l.strip()]
ok(members == cmembers, "struct call-counts matches struct meter_call_counts")

print("1..%d" % n)
sys.exit(1 if failed else 0)
PY
