#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""meter-run --patch's counts against callgrind's, for the patch tests.

callgrind_calls.py CALLGRIND_OUT PROG PROFILE_JSON PATCH_LIST [MAX_REFUSED]

Sums callgrind's calls= lines per called function of PROG's own object
(code without a symbol, in a stripped object, by its address as meter
names it from .eh_frame)
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


def callgrind_name(name, prog):
    """meter's name of a function of a stripped object (its .eh_frame's:
    FILE@0xADDR) as callgrind names code without a symbol (0x and the
    address in 16 digits), where FILE is PROG's."""
    m = re.match(r'(.*)@0x([0-9a-f]+)$', name)
    if m and prog.split('/')[-1].startswith(m.group(1)):
        return '0x%016x' % int(m.group(2), 16)
    return name


def main(argv):
    prog = os.path.realpath(argv[2])
    theirs = callgrind_calls(argv[1], prog)
    ours = {callgrind_name(f['name'], prog): f.get('calls', 0)
            for f in json.load(open(argv[3]))['functions']}
    patched, refused, crt = set(), set(), set()
    for line in open(argv[4]):
        words = line.split()
        if words[:2] == ['meter:', 'patched'] and len(words) == 3:
            patched.add(callgrind_name(words[2], prog))
        elif words[:2] == ['meter:', 'refused'] and len(words) > 3:
            name = callgrind_name(words[2].rstrip(':'), prog)
            # the C runtime's start-up (_start, the PLT), which the
            # program's own code never calls
            if ' '.join(words[3:]).startswith(("the program's entry point",
                                               "the linker's or the C runtime's")):
                crt.add(name)
            else:
                refused.add(name)
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
        if f == '(below main)' or f in crt or (
                re.match(r'0x[0-9a-f]+$', f) and f not in patched):
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
