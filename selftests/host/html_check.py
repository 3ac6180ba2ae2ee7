#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Drives Debian's chromium, headless, over the DevTools protocol on a pipe
(--remote-debugging-pipe: no port, no websocket library), with the network
off, through meter's HTML reports; prints TAP lines numbered from --first.

  html_check.py --first N --profile P.json --report R.html
                --diff D.html --shots DIR        the checks of test_tools_html
                [--real-profile P --real-report R]   and a real program's page
  html_check.py --bench R.html                   seconds until interactive

What the page shows is checked against what this script computes itself
from the JSON profile (the stacks merged into a tree, the edges with
Racket's 1/k rule), not against the renderer's own numbers.
"""
import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self):
        exe = shutil.which('chromium') or shutil.which('chromium-browser')
        if not exe:
            raise RuntimeError('chromium is not installed')
        self.prof = tempfile.mkdtemp(prefix='meter-chromium.')
        r1, w1 = os.pipe()      # commands: us -> chromium (its fd 3)
        r2, w2 = os.pipe()      # replies: chromium -> us (its fd 4)
        for fd in (w1, r2):     # ours only
            os.set_inheritable(fd, False)

        def fds():
            # via fds above 4, so neither lands on the other's target
            a, b = os.dup(r1), os.dup(w2)
            a, b = os.dup2(a, a + 10), os.dup2(b, b + 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)
        self.proc = subprocess.Popen(
            [exe, '--headless=new', '--no-sandbox', '--disable-gpu',
             '--remote-debugging-pipe', '--user-data-dir=' + self.prof,
             '--no-first-run', '--no-default-browser-check',
             '--disable-background-networking', '--disable-extensions',
             '--disable-sync', '--disable-component-update',
             '--window-size=1280,1000', 'about:blank'],
            preexec_fn=fds, close_fds=False, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(r1)
        os.close(w2)
        self.w = os.fdopen(w1, 'wb', buffering=0)
        self.r = os.fdopen(r2, 'rb', buffering=0)
        self.buf = b''
        self.next_id = 0
        self.events = []
        self.session = None
        target = self.call('Target.createTarget', url='about:blank')
        self.session = self.call('Target.attachToTarget', flatten=True,
                                 targetId=target['targetId'])['sessionId']
        for domain in ('Page', 'Runtime', 'Log', 'Network'):
            self.call(domain + '.enable')
        self.call('Network.emulateNetworkConditions', offline=True,
                  latency=0, downloadThroughput=-1, uploadThroughput=-1)

    def _read(self):
        while b'\0' not in self.buf:
            chunk = self.r.read(65536)
            if not chunk:
                raise RuntimeError('chromium closed the pipe')
            self.buf += chunk
        msg, self.buf = self.buf.split(b'\0', 1)
        return json.loads(msg)

    def call(self, method, **params):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params}
        if self.session and not method.startswith('Target.'):
            msg['sessionId'] = self.session
        self.w.write(json.dumps(msg).encode() + b'\0')
        while True:
            m = self._read()
            if m.get('id') == self.next_id:
                if 'error' in m:
                    raise RuntimeError('%s: %s' % (method, m['error']))
                return m.get('result', {})
            if 'method' in m:
                self.events.append(m)

    def js(self, expr):
        r = self.call('Runtime.evaluate', expression=expr,
                      returnByValue=True, awaitPromise=True)
        if 'exceptionDetails' in r:
            raise RuntimeError('page: %s' % r['exceptionDetails'])
        return r['result'].get('value')

    def load(self, path):
        self.call('Page.navigate', url='file://' + os.path.abspath(path))
        t0 = time.monotonic()
        while time.monotonic() - t0 < 60:
            if self.js('document.readyState === "complete" && '
                       '!!document.body && document.body.dataset.ready'):
                return
            time.sleep(0.05)
        raise RuntimeError('the page never became ready')

    def shot(self, path):
        data = self.call('Page.captureScreenshot', format='png',
                         captureBeyondViewport=False)['data']
        with open(path, 'wb') as f:
            f.write(base64.b64decode(data))

    def problems(self):
        """Console errors, exceptions and requests that left the file."""
        out = []
        for e in self.events:
            m, p = e['method'], e.get('params', {})
            if m == 'Runtime.exceptionThrown':
                out.append('exception: %s' % p['exceptionDetails'].get('text'))
            elif m == 'Runtime.consoleAPICalled' and p['type'] in ('error', 'assert'):
                out.append('console.%s: %s' % (p['type'], p.get('args')))
            elif m == 'Log.entryAdded' and p['entry']['level'] == 'error':
                out.append('log: %s' % p['entry'].get('text'))
            elif m == 'Network.requestWillBeSent':
                url = p['request']['url']
                if not url.startswith(('file:', 'data:', 'about:')):
                    out.append('request: %s' % url)
        return out

    def close(self):
        try:
            self.call('Browser.close')
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.prof, ignore_errors=True)


class Tap:
    def __init__(self, first):
        self.n = first - 1
        self.failed = 0

    def check(self, desc, cond, diag=None):
        self.n += 1
        if cond:
            print('ok %d - %s' % (self.n, desc))
        else:
            self.failed += 1
            print('not ok %d - %s' % (self.n, desc))
            if diag is not None:
                for line in str(diag).splitlines():
                    print('# ' + line)
        sys.stdout.flush()
        return cond


def profile_model(path):
    """names by id, each stack as (names root first, samples), totals."""
    with open(path) as f:
        p = json.load(f)
    names = names_of(p)
    # a stack cut at its root hangs under a [truncated] frame
    stacks = [(['[truncated]'] * bool(s.get('truncated')) +
               [names[i] for i in s['frames']], s['samples'])
              for s in p['stacks']]
    return p, stacks


def names_of(p):
    return {fn['id']: fn['name'] for fn in p['functions']}


def tree_of(stacks, focus=None):
    """{path tuple: samples} of the stacks merged by names."""
    nodes = {(): 0}
    for frames, v in stacks:
        if focus is not None:
            if focus not in frames:
                continue
            frames = frames[frames.index(focus):]
        nodes[()] += v
        for i in range(1, len(frames) + 1):
            nodes[tuple(frames[:i])] = nodes.get(tuple(frames[:i]), 0) + v
    return nodes


def edges_of(stacks, fn):
    """callers and callees of fn with Racket's 1/k rule; fn's total."""
    callers, callees, total = {}, {}, 0
    for frames, v in stacks:
        k = frames.count(fn)
        if not k:
            continue
        total += v
        for i, name in enumerate(frames):
            if name != fn:
                continue
            c = frames[i - 1] if i else '<spontaneous>'
            callers[c] = callers.get(c, 0) + v / k
            if i + 1 < len(frames):
                d = frames[i + 1]
                callees[d] = callees.get(d, 0) + v / k
    return callers, callees, total


BOXES_JS = '''(() => {
  const fl = document.querySelector('div.flame .frames');
  const W = fl.getBoundingClientRect().width;
  return {W: W, boxes: Array.from(fl.querySelectorAll('.fr')).map(b => {
    const r = b.getBoundingClientRect();
    return {name: b.dataset.name, v: +b.dataset.v, w: r.width,
            x: r.left - fl.getBoundingClientRect().left,
            y: r.top - fl.getBoundingClientRect().top,
            match: b.classList.contains('match')};
  })};
})()'''


def check_boxes(tap, what, got, nodes, total):
    """one box per merged-tree node wide enough to draw, widths as samples"""
    W = got['W']
    want = sorted((path[-1] if path else 'all', v) for path, v in nodes.items()
                  if v and v / total * W >= 1)
    have = sorted((b['name'], b['v']) for b in got['boxes'])
    tap.check('%s: one box per stack frame (%d boxes)' % (what, len(want)),
              want == have, 'want %s\nhave %s' % (want[:20], have[:20]))
    bad = [b for b in got['boxes']
           if abs(b['w'] - b['v'] / total * W) > 1.0]
    tap.check('%s: each box as wide as its samples (within 1 px of %.0f px)'
              % (what, W), not bad, bad[:5])


def run_checks(a):
    tap = Tap(a.first)
    p, stacks = profile_model(a.profile)
    total = sum(v for _, v in stacks)
    # the flat table's figures: the functions' own counters over all samples
    selfs = {f['name']: f['self_samples'] for f in p['functions']}
    hottest = max(selfs, key=lambda k: selfs[k])
    nsamples = p['samples']
    b = Browser()
    try:
        b.load(a.report)
        b.shot(os.path.join(a.shots, 'html-report.png'))
        # the flat table, sorted by self % by a click on its heading
        # name first (ascending), then self % (descending on first click)
        b.js('''document.querySelectorAll('#flat-table th')[0].click()''')
        b.js('''document.querySelectorAll('#flat-table th')[1].click()''')
        first = b.js('''(() => { const r = document.querySelector(
            '#flat-table tbody tr'); return [r.cells[0].textContent,
            +r.cells[1].textContent]; })()''')
        tap.check('flat table sorted by self %%: %s first (%.2f %%), the '
                  'hottest in the profile' % (first[0], first[1]),
                  first[0] == hottest and
                  abs(first[1] - 100 * selfs[hottest] / nsamples) < 0.01,
                  'page %s, profile %s %.2f' % (first, hottest,
                                                100 * selfs[hottest] / nsamples))
        # a click on its name: the function's callers and callees
        b.js('''document.querySelector('#flat-table tbody tr a').click()''')
        view = b.js('''(() => { const f = document.querySelector('.fn:target');
          if (!f) return null;
          const rows = t => Array.from(f.querySelectorAll('table.' + t +
            ' tbody tr')).filter(r => r.cells.length === 3 &&
            !r.classList.contains('more')).map(r =>
            [r.cells[0].textContent, +r.cells[1].textContent]);
          return {name: f.querySelector('h3').textContent,
                  callers: rows('callers'), callees: rows('callees')}; })()''')
        callers, callees, ftotal = edges_of(stacks, hottest)

        def same(rows, want):
            got = {n: s for n, s in rows}
            return set(got) == set(want) and all(
                abs(got[n] - 100 * want[n] / ftotal) < 0.01 for n in want)
        tap.check('click: %s selected, its callers with their shares'
                  % hottest, view and view['name'] == hottest and
                  same(view['callers'], callers),
                  'page %s\nwant %s of %d' % (view, callers, ftotal))
        tap.check('click: its callees with their shares',
                  view and same(view['callees'], callees),
                  'page %s\nwant %s' % (view and view['callees'], callees))
        # a caller's link goes to the caller
        if view and view['callers'] and view['callers'][0][0] != '<spontaneous>':
            caller = view['callers'][0][0]
            b.js('''document.querySelector('.fn:target table.callers a')
                    .click()''')
            now = b.js('''document.querySelector('.fn:target h3')
                          .textContent''')
            tap.check('click a caller: the view goes to %s' % caller,
                      now == caller, now)
        else:
            tap.check('click a caller # SKIP the hottest has no caller', True)
        b.shot(os.path.join(a.shots, 'html-function.png'))
        b.js('''document.getElementById('flame').scrollIntoView()''')
        nodes = tree_of(stacks)
        check_boxes(tap, 'flame graph', b.js(BOXES_JS), nodes, total)
        got = b.js(BOXES_JS)
        root = [x for x in got['boxes'] if x['name'] == 'all'][0]
        tap.check('flame graph: the root at the bottom',
                  all(x['y'] <= root['y'] for x in got['boxes']))
        b.shot(os.path.join(a.shots, 'html-flame.png'))
        # icicle: root on top
        b.js('''document.querySelector('div.flame .mode').click()''')
        got = b.js(BOXES_JS)
        root = [x for x in got['boxes'] if x['name'] == 'all'][0]
        tap.check('icicle: the root on top, the same boxes',
                  all(x['y'] >= root['y'] for x in got['boxes']) and
                  len(got['boxes']) == len(b.js(BOXES_JS)['boxes']))
        b.js('''document.querySelector('div.flame .mode').click()''')
        # search
        b.js('''(() => { const s = document.querySelector('div.flame .search');
                s.value = %s; s.dispatchEvent(new Event('input')); })()'''
             % json.dumps('^' + re.escape(hottest) + '$'))
        got = b.js(BOXES_JS)
        matched = [x for x in got['boxes'] if x['match']]
        pct = b.js('''+document.querySelector('div.flame .matched')
                      .dataset.pct''')
        want_pct = 100 * sum(v for path, v in nodes.items()
                             if path and path[-1] == hottest and
                             hottest not in path[:-1]) / total
        tap.check('search: every box of %s highlighted, no other (%d)'
                  % (hottest, len(matched)),
                  matched and all(x['name'] == hottest for x in matched) and
                  len(matched) == sum(1 for x in got['boxes']
                                      if x['name'] == hottest))
        tap.check('search: matched %.2f %% of the samples' % want_pct,
                  abs(pct - want_pct) < 0.01, pct)
        # zoom: a click on a box makes it the whole width
        target = [x for x in got['boxes'] if x['name'] == hottest][0]
        b.js('''Array.from(document.querySelectorAll('div.flame .fr'))
                .find(e => e.dataset.name === %s).click()'''
             % json.dumps(hottest))
        got = b.js(BOXES_JS)
        zoomed = [x for x in got['boxes'] if x['name'] == hottest]
        tap.check('zoom: a click on %s makes it the whole width' % hottest,
                  any(abs(x['w'] - got['W']) < 1 and x['v'] == target['v']
                      for x in zoomed), zoomed)
        b.shot(os.path.join(a.shots, 'html-zoom.png'))
        # focus from the call graph: only the stacks through that function
        # the heaviest function other than the root and the hottest
        totals = {}
        for frames, v in stacks:
            for name in set(frames[1:]):
                totals[name] = totals.get(name, 0) + v
        focus = max((f for f in totals if f != hottest),
                    key=lambda f: totals[f], default=hottest)
        b.js('''Array.from(document.querySelectorAll('.fn')).find(f =>
                f.querySelector('h3').textContent === %s)
                .querySelector('button.focus').click()''' % json.dumps(focus))
        fnodes = tree_of(stacks, focus)
        check_boxes(tap, 'focus on %s' % focus, b.js(BOXES_JS), fnodes,
                    fnodes[()])
        b.shot(os.path.join(a.shots, 'html-focus.png'))
        # the thread selector: one thread's stacks, then another's from
        # the threads table, then all of them again
        b.js('''document.querySelector('div.flame .unfocus').click()''')
        by_tid = {}
        for s in p['stacks']:
            by_tid.setdefault(s.get('tid', 0), []).append(
                ([names_of(p)[i] for i in s['frames']], s['samples']))
        tids = sorted(by_tid, key=lambda t: (-sum(v for _, v in by_tid[t]), t))
        opts = b.js('''Array.from(document.querySelectorAll(
            'div.flame select.thread option')).map(o => o.value)''')
        tap.check('threads: a selector with all threads and each of the %d '
                  'in the stacks, busiest first' % len(tids),
                  len(tids) > 1 and opts == [''] + [str(t) for t in tids],
                  'page %s\nprofile %s' % (opts, tids))
        pick = tids[-1]
        b.js('''(() => { const s = document.querySelector(
                'div.flame select.thread'); s.value = %s;
                s.dispatchEvent(new Event('change')); })()'''
             % json.dumps(str(pick)))
        tnodes = tree_of(by_tid[pick])
        check_boxes(tap, 'thread %d only' % pick, b.js(BOXES_JS), tnodes,
                    tnodes[()])
        b.shot(os.path.join(a.shots, 'html-thread.png'))
        other = tids[0]
        b.js('''Array.from(document.querySelectorAll('#threads tbody tr'))
                .find(r => r.cells[0].textContent === %s).click()'''
             % json.dumps(str(other)))
        got = b.js(BOXES_JS)
        root = [x['v'] for x in got['boxes'] if x['name'] == 'all']
        tap.check('threads: a click in the threads table shows thread %d '
                  '(%d samples)' % (other, sum(v for _, v in by_tid[other])),
                  root == [sum(v for _, v in by_tid[other])] and
                  b.js('''document.querySelector('div.flame select.thread')
                          .value''') == str(other), root)
        b.js('''(() => { const s = document.querySelector(
                'div.flame select.thread'); s.value = '';
                s.dispatchEvent(new Event('change')); })()''')
        got = b.js(BOXES_JS)
        tap.check('threads: all threads again, %d samples' % total,
                  [x['v'] for x in got['boxes'] if x['name'] == 'all'] ==
                  [total])
        # the diff report
        b.load(a.diff)
        rows = b.js('''Array.from(document.querySelectorAll(
            '#diff-table tbody tr')).map(r => [r.cells[0].textContent,
            r.cells[1].textContent])''')
        tap.check('diff report: its table lists the functions (%d)'
                  % len(rows or []), bool(rows), rows)
        got = b.js(BOXES_JS)
        tap.check('diff report: a differential flame graph (%d boxes)'
                  % len(got['boxes']), len(got['boxes']) > 1)
        b.shot(os.path.join(a.shots, 'html-diff.png'))
        # boxes of one to three pixels drawn at their own width (a label's
        # padding must not widen them), one below a pixel not drawn
        b.load(a.narrow_report)
        np_, nstacks = profile_model(a.narrow_profile)
        check_boxes(tap, 'narrow boxes', b.js(BOXES_JS), tree_of(nstacks),
                    sum(v for _, v in nstacks))
        # a stack deeper than a sample keeps: its cut root drawn as a
        # [truncated] box, as the folded and pprof formats have it
        b.load(a.deep_report)
        dp, dstacks = profile_model(a.deep_profile)
        check_boxes(tap, 'deep stack (128 frames kept of 300)',
                    b.js(BOXES_JS), tree_of(dstacks),
                    sum(v for _, v in dstacks))
        # C++ names of 270 characters, and a name of 400 with no space:
        # the flat table fits the window, its last column (calls) in view
        for what, path in (('C++ names', a.cxx_report),
                           ('a 400-character name', a.wide_report)):
            b.load(path)
            fit = b.js('''(() => {
                const t = document.querySelector('#flat-table');
                const last = t.querySelector('tbody tr td:last-child');
                return { table: t.getBoundingClientRect().right,
                         calls: last.getBoundingClientRect().right,
                         window: document.documentElement.clientWidth };
                })()''')
            tap.check('%s: the flat table fits the %d px window (its '
                      'right edge at %.0f px, the calls column in view)'
                      % (what, fit['window'], fit['table']),
                      fit['table'] <= fit['window'] and
                      fit['calls'] <= fit['window'], fit)
        b.shot(os.path.join(a.shots, 'html-cxx.png'))
        # a program we did not write: Debian's lua5.4
        if a.real_report:
            rp, rstacks = profile_model(a.real_profile)
            rtotal = sum(v for _, v in rstacks)
            b.load(a.real_report)
            rows = b.js('''document.querySelectorAll('#flat-table tbody tr')
                           .length''')
            tap.check('lua5.4: the flat table has a row per function that '
                      'has samples or calls (%d)' % rows, rows == sum(
                          1 for f in rp['functions'] if f['self_samples'] or
                          f['total_samples'] or f['calls']), rows)
            check_boxes(tap, 'lua5.4 (%d stacks)' % len(rstacks),
                        b.js(BOXES_JS), tree_of(rstacks), rtotal)
            b.shot(os.path.join(a.shots, 'html-lua.png'))
        else:
            for what in ('flat table', 'boxes', 'widths'):
                tap.check('lua5.4 %s # SKIP no lua build' % what, True)
        probs = b.problems()
        tap.check('no console error, no exception, no request off the file',
                  not probs, '\n'.join(probs))
        # scripts off: the tables are there, and the links still navigate
        b.call('Emulation.setScriptExecutionDisabled', value=True)
        b.call('Page.navigate', url='file://' + os.path.abspath(a.report))
        time.sleep(1)
        rows = b.js('''document.querySelectorAll('#flat-table tbody tr')
                       .length''')
        flame = b.js('''document.querySelectorAll('div.flame .fr').length''')
        tap.check('scripts off: the flat table is there (%d rows), no flame '
                  'graph drawn' % rows, rows == sum(
                      1 for f in p['functions'] if f['self_samples'] or
                      f['total_samples'] or f['calls']) and flame == 0,
                  (rows, flame))
        b.call('Page.navigate', url='file://' + os.path.abspath(a.report) +
               '#' + b.js('''document.querySelector('#flat-table tbody tr a')
                             .getAttribute('href').slice(1)'''))
        time.sleep(1)
        target = b.js('''(() => { const f = document.querySelector(
            '.fn:target'); return f && f.querySelector('h3').textContent;
            })()''')
        tap.check('scripts off: a link goes to the function\'s entry (%s)'
                  % target, target == hottest, target)
    finally:
        b.close()
    return tap.failed


def bench(path):
    b = Browser()
    try:
        t0 = time.monotonic()
        b.load(path)
        t1 = time.monotonic()
        # interactive: a search over every box answers
        t2 = time.monotonic()
        b.js('''(() => { const s = document.querySelector('div.flame .search');
                s.value = 'f1'; s.dispatchEvent(new Event('input')); })()''')
        t3 = time.monotonic()
        boxes = b.js('''document.querySelectorAll('div.flame .fr').length''')
        # one thread's flame graph (the tree rebuilt, the boxes redrawn)
        t4 = time.monotonic()
        b.js('''(() => { const s = document.querySelector(
                'div.flame select.thread');
                if (!s) return; s.selectedIndex = 1;
                s.dispatchEvent(new Event('change')); })()''')
        t5 = time.monotonic()
        print('load_to_ready_s %.3f search_s %.3f boxes %d thread_s %.3f'
              % (t1 - t0, t3 - t2, boxes, t5 - t4))
        probs = b.problems()
        if probs:
            print('\n'.join(probs), file=sys.stderr)
            return 1
    finally:
        b.close()
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--first', type=int, default=1)
    ap.add_argument('--profile')
    ap.add_argument('--report')
    ap.add_argument('--diff')
    ap.add_argument('--narrow-profile')
    ap.add_argument('--narrow-report')
    ap.add_argument('--deep-profile')
    ap.add_argument('--deep-report')
    ap.add_argument('--cxx-report')
    ap.add_argument('--wide-report')
    ap.add_argument('--real-profile')
    ap.add_argument('--real-report')
    ap.add_argument('--shots', default='.')
    ap.add_argument('--bench')
    a = ap.parse_args()
    if a.bench:
        return bench(a.bench)
    return 1 if run_checks(a) else 0


if __name__ == '__main__':
    sys.exit(main())
