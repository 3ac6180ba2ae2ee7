#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""meter-run --patch's counts against callgrind's, for the patch tests.

callgrind_calls.py CALLGRIND_OUT PROG PROFILE_JSON PATCH_LIST [MAX_REFUSED]

Sums callgrind's calls= lines per called function of PROG's own object
(ld.so and libc have functions of the same names: check_match), recursion
levels (rec'2) together, and compares every function of PROG that
callgrind saw called with the profile's count.  PATCH_LIST is meter-run
--patch-list's stderr: a function it refused is reported, not compared.
Fails on any difference, a called function neither counted nor refused
(callgrind's "(below main)" and 0x... names, code without a symbol, are
the C runtime's start-up; f.cold, a part of f, is entered by a jump), or more refused than MAX_REFUSED percent
(default 5) of those called.
"""
import json
import os
import re
import sys


def callgrind_calls(path, prog):
    names, objs, calls = {}, {}, {}
    ob = cob = cfn = None
    for line in open(path):
        line = line.rstrip('\n')
        m = re.match(r'(ob|cob|fn|cfn)=\((\d+)\)(?: (.*))?$', line)
        if m:
            kind, key, text = m.groups()
            if kind in ('ob', 'cob'):
                if text:
                    objs[key] = os.path.realpath(text)
                if kind == 'ob':
                    ob = objs[key]
                else:
                    cob = objs[key]
                continue
            if text:
                names[key] = re.sub(r"'\d+$", '', text)
            if kind == 'cfn':
                cfn = names[key]
            else:
                cob = None
            continue
        m = re.match(r'calls=(\d+) ', line)
        if m and cfn is not None:
            if (cob or ob) == prog:
                calls[cfn] = calls.get(cfn, 0) + int(m.group(1))
            cob = None
    return calls


def main(argv):
    prog = os.path.realpath(argv[2])
    theirs = callgrind_calls(argv[1], prog)
    ours = {f['name']: f.get('calls', 0)
            for f in json.load(open(argv[3]))['functions']}
    patched, refused = set(), set()
    for line in open(argv[4]):
        words = line.split()
        if words[:2] == ['meter:', 'patched'] and len(words) == 3:
            patched.add(words[2])
        elif words[:2] == ['meter:', 'refused'] and len(words) > 3:
            refused.add(words[2].rstrip(':'))
    max_refused = float(argv[5]) if len(argv) > 5 else 5.0
    called = sorted(f for f in theirs if f in patched or f in refused)
    bad = missing = 0
    for f in called:
        if f in refused:
            print('# %s: refused, callgrind %d' % (f, theirs[f]))
        elif ours.get(f) != theirs[f]:
            bad += 1
            print('# %s: meter %s, callgrind %d' % (f, ours.get(f), theirs[f]))
    for f in sorted(set(theirs) - set(called)):
        # callgrind's names for code without a symbol: the C runtime's
        # start-up (frame_dummy and the like, which the plan leaves out)
        if f == '(below main)' or re.match(r'0x[0-9a-f]+$', f):
            continue
        # GCC's split-off parts (f.cold), entered by a jump from inside
        # f, which callgrind counts as calls: f's code, not functions
        if re.search(r'\.cold(\.\d+)?$', f):
            continue
        missing += 1
        print('# %s: called %d times, neither patched nor refused'
              % (f, theirs[f]))
    nref = sum(1 for f in called if f in refused)
    share = 100.0 * nref / len(called) if called else 100.0
    print('# %d functions of %s called: %d as callgrind, %d differ, '
          '%d refused (%.1f %%)' % (len(called), os.path.basename(prog),
                                    len(called) - nref - bad, bad, nref,
                                    share))
    return 1 if bad or missing or not called or share > max_refused else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
