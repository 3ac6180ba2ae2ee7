// SPDX-License-Identifier: MIT
// meter's HTML report (tools/render_html.c, tools/render_diff.c): sorting
// for the tables, and the flame graph / icicle of the sampled stacks that
// the page carries as JSON.  No library and no request: the file works
// opened from file:// with the network off.
(function () {
	'use strict';

	var ROW = 18;		// px per frame
	var MIN_PX = 1;		// boxes narrower than this are not drawn

	function num(td) {
		var v = parseFloat(td.textContent);
		return isNaN(v) ? -Infinity : v;
	}

	// Click a heading: sort by it, descending first (text ascending).
	function sortable(table) {
		var ths = table.tHead ? table.tHead.rows[0].cells : [];
		Array.prototype.forEach.call(ths, function (th, col) {
			th.classList.add('sort');
			th.addEventListener('click', function () {
				var text = th.dataset.type === 's';
				var down = th.dataset.dir !== 'down';
				var body = table.tBodies[0];
				var rows = Array.prototype.slice.call(body.rows);

				if (text)
					down = th.dataset.dir === 'up';
				rows.sort(function (a, b) {
					var x, y;

					if (text) {
						x = a.cells[col].textContent;
						y = b.cells[col].textContent;
						return down ? y.localeCompare(x) :
							x.localeCompare(y);
					}
					x = num(a.cells[col]);
					y = num(b.cells[col]);
					return down ? y - x : x - y;
				});
				Array.prototype.forEach.call(ths, function (h) {
					delete h.dataset.dir;
				});
				th.dataset.dir = down ? 'down' : 'up';
				rows.forEach(function (r) { body.appendChild(r); });
			});
		});
	}

	// A stable warm colour per name, as flame graphs draw them.
	function hue(name) {
		var h = 0, i;

		for (i = 0; i < name.length; i++)
			h = (h * 31 + name.charCodeAt(i)) >>> 0;
		return 'hsl(' + (10 + h % 40) + ',' + (70 + (h >> 8) % 25) +
			'%,' + (55 + (h >> 16) % 12) + '%)';
	}

	// Diff colour: red where the share grew, blue where it shrank,
	// grey inside the noise band (diff_band's, from the page's data).
	function diffColour(d, band) {
		var a;

		if (Math.abs(d) <= band)
			return 'hsl(0,0%,85%)';
		a = Math.min(1, Math.abs(d) / 0.1);
		return d > 0 ? 'hsl(0,80%,' + (85 - 35 * a) + '%)' :
			'hsl(220,80%,' + (85 - 35 * a) + '%)';
	}

	function esc(s) {
		return s.replace(/&/g, '&amp;').replace(/</g, '&lt;')
			.replace(/>/g, '&gt;').replace(/"/g, '&quot;');
	}

	// A stack row: [samples, state, tid, frame...] (render_html.c); the
	// state's bit 4 marks a stack cut at its root, drawn under a
	// "[truncated]" frame as the folded and pprof formats do.
	var FRAME0 = 3, CUT = 4;

	// The stacks merged into a tree; with focus, each stack from the
	// outermost call of that function on; with tid, that thread's only.
	function buildTree(d, focus, tid) {
		var root = { n: -1, v: 0, c: new Map(), p: null, depth: 0 };
		var names = d.funcs, max = 0;

		d.stacks.forEach(function (s) {
			var v = s[0], state = s[1] & ~CUT, i = FRAME0 - 1;
			var node = root, f, ch;

			if (tid !== undefined && s[2] !== tid)
				return;
			if (focus !== undefined) {
				for (i = FRAME0; i < s.length; i++)
					if (names[s[i]] === focus)
						break;
				if (i === s.length)
					return;
			}
			root.v += v;
			for (; i <= s.length; i++) {
				if (i < FRAME0) {
					if (!(s[1] & CUT))
						continue;
					f = '[truncated]';
				} else if (i === s.length) {
					if (!state)
						break;
					f = state === 1 ? '[runq]' : '[blocked]';
				} else {
					f = names[s[i]];
				}
				ch = node.c.get(f);
				if (!ch) {
					ch = { n: f, v: 0, c: new Map(), p: node,
					       depth: node.depth + 1 };
					node.c.set(f, ch);
				}
				ch.v += v;
				node = ch;
				if (node.depth > max)
					max = node.depth;
			}
		});
		root.max = max;
		return root;
	}

	// The node of base's tree at the same path of names, or null.
	function samePath(baseRoot, node) {
		var path = [], b = baseRoot;

		for (; node.p; node = node.p)
			path.unshift(node.n);
		for (var i = 0; b && i < path.length; i++)
			b = b.c.get(path[i]);
		return b || null;
	}

	// The threads of the stacks, busiest first: [[tid, samples], ...].
	function threadsOf(d) {
		var m = new Map(), out = [];

		d.stacks.forEach(function (s) {
			m.set(s[2], (m.get(s[2]) || 0) + s[0]);
		});
		m.forEach(function (v, t) { out.push([t, v]); });
		return out.sort(function (a, b) { return b[1] - a[1] || a[0] - b[0]; });
	}

	// A selector where the stacks come from several threads; not on a
	// diff, whose two runs have different threads.
	function threadPicker(d) {
		var ts = d.base ? [] : threadsOf(d), all = 0, h;

		if (ts.length < 2)
			return '';
		ts.forEach(function (t) { all += t[1]; });
		h = '<select class="thread" aria-label="thread">' +
			'<option value="">all threads</option>';
		ts.forEach(function (t) {
			h += '<option value="' + t[0] + '">' +
				(t[0] ? 'thread ' + t[0] : 'thread not known') +
				' (' + (all ? 100 * t[1] / all : 0).toFixed(1) +
				' %)</option>';
		});
		return h + '</select> ';
	}

	function Flame(el, data) {
		var self = this, pick;

		this.el = el;
		this.data = data;
		this.icicle = false;
		this.focus = undefined;
		this.tid = undefined;
		this.query = '';
		el.innerHTML =
			'<div class="controls">' + threadPicker(data) +
			'<button class="mode">icicle</button> ' +
			'<button class="reset">reset zoom</button> ' +
			'<input class="search" type="search" ' +
			'placeholder="search (regular expression)"> ' +
			'<span class="focusing"></span> ' +
			'<button class="unfocus" hidden>unfocus</button> ' +
			'<span class="matched"></span></div>' +
			'<div class="info">&#160;</div>' +
			'<div class="frames"></div>';
		this.frames = el.querySelector('.frames');
		this.info = el.querySelector('.info');
		el.querySelector('.mode').addEventListener('click', function () {
			self.icicle = !self.icicle;
			this.textContent = self.icicle ? 'flame' : 'icicle';
			self.render();
		});
		el.querySelector('.reset').addEventListener('click', function () {
			self.zoom = null;
			self.render();
		});
		el.querySelector('.search').addEventListener('input',
			function () {
				self.query = this.value;
				self.highlight();
			});
		el.querySelector('.unfocus').addEventListener('click',
			function () { self.setFocus(undefined); });
		pick = el.querySelector('.thread');
		if (pick)
			pick.addEventListener('change', function () {
				self.setThread(this.value === '' ? undefined :
					       +this.value);
			});
		this.frames.addEventListener('click', function (ev) {
			var t = ev.target.closest('.fr');

			if (!t)
				return;
			self.zoom = self.nodes[+t.dataset.i];
			self.render();
		});
		this.frames.addEventListener('mouseover', function (ev) {
			var t = ev.target.closest('.fr');

			if (t)
				self.info.textContent = t.title;
		});
		this.setFocus(undefined);
	}

	Flame.prototype.setFocus = function (name) {
		var d = this.data;

		this.focus = name;
		this.root = buildTree(d, name, this.tid);
		if (d.base)
			this.baseRoot = buildTree(d.base, name);
		this.zoom = null;
		this.el.querySelector('.focusing').textContent =
			name === undefined ? '' : 'focus: ' + name;
		this.el.querySelector('.unfocus').hidden = name === undefined;
		this.el.dataset.focus = name === undefined ? '' : name;
		this.render();
	};

	// One thread's stacks (tid), or all of them (undefined).
	Flame.prototype.setThread = function (tid) {
		var pick = this.el.querySelector('.thread');

		this.tid = tid;
		if (pick)
			pick.value = tid === undefined ? '' : String(tid);
		this.el.dataset.thread = tid === undefined ? '' : tid;
		this.setFocus(this.focus);
	};

	Flame.prototype.title = function (node) {
		var pct = this.root.v ? 100 * node.v / this.root.v : 0;
		var t = (node.n === -1 ? 'all' : node.n) + ': ' + node.v +
			' samples, ' + pct.toFixed(2) + ' %';

		if (this.data.period_ns)
			t += ', ' + (node.v * this.data.period_ns / 1e9)
				.toFixed(3) + ' s';
		if (this.baseRoot) {
			var b = samePath(this.baseRoot, node);
			var bs = b && this.baseRoot.v ? b.v / this.baseRoot.v : 0;
			var ns = this.root.v ? node.v / this.root.v : 0;

			t += '; was ' + (100 * bs).toFixed(2) + ' %, ' +
				(ns >= bs ? '+' : '') +
				(100 * (ns - bs)).toFixed(2) + ' points';
		}
		return t;
	};

	Flame.prototype.render = function () {
		var root = this.root, zoom = this.zoom || root;
		var W = this.frames.clientWidth || 1000;
		var html = [], nodes = [], self = this;
		var height = (root.max + 1) * ROW;
		var icicle = this.icicle;

		function box(node, x, w) {
			var i = nodes.length, top, colour, cls = 'fr';

			nodes.push(node);
			top = icicle ? node.depth * ROW :
				height - (node.depth + 1) * ROW;
			if (self.baseRoot) {
				var b = samePath(self.baseRoot, node);
				var ns = root.v ? node.v / root.v : 0;
				var bs = b && self.baseRoot.v ?
					b.v / self.baseRoot.v : 0;
				var d = self.data;
				var band = d.sigmas * Math.sqrt(
					(root.v ? ns * (1 - ns) * d.weight /
					 root.v : 0) +
					(self.baseRoot.v ? bs * (1 - bs) *
					 d.base.weight / self.baseRoot.v : 0));

				colour = diffColour(ns - bs, band);
				if (!b)
					cls += ' new';
			} else {
				colour = node.n === -1 ? '#ddd' :
					node.n.charAt(0) === '[' ? '#9cf' :
					hue(node.n);
			}
			html.push('<div class="' + cls + '" data-i="' + i +
				'" data-v="' + node.v + '" data-name="' +
				esc(node.n === -1 ? 'all' : node.n) +
				'" style="left:' + (100 * x) + '%;width:' +
				(100 * w) + '%;top:' + top +
				'px;background:' + colour + '" title="' +
				esc(self.title(node)) + '">' +
				esc(node.n === -1 ? 'all' : node.n) + '</div>');
		}
		function draw(node, x, w) {
			var cx = x;

			box(node, x, w);
			node.c.forEach(function (ch) {
				var cw = zoom.v ? ch.v / zoom.v : 0;

				if (cw * W >= MIN_PX)
					draw(ch, cx, cw);
				cx += cw;
			});
		}
		// the zoomed node's ancestors across the whole width
		for (var a = zoom.p, anc = []; a; a = a.p)
			anc.unshift(a);
		anc.forEach(function (a) { box(a, 0, 1); });
		if (zoom.v)
			draw(zoom, 0, 1);
		this.nodes = nodes;
		this.frames.style.height = height + 'px';
		this.frames.innerHTML = html.join('');
		this.el.dataset.zoom = zoom.n === -1 ? '' : zoom.n;
		this.highlight();
	};

	Flame.prototype.highlight = function () {
		var q = this.query, re = null, matched = 0, self = this;
		var out = this.el.querySelector('.matched');

		if (q) {
			try {
				re = new RegExp(q, 'i');
			} catch (e) {
				re = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g,
							  '\\$&'), 'i');
			}
		}
		// samples under a match, each counted once (outermost match)
		(function walk(node, under) {
			var m = re && node.n !== -1 && re.test(node.n);

			if (m && !under)
				matched += node.v;
			node.c.forEach(function (ch) { walk(ch, under || m); });
		})(this.root, false);
		this.frames.querySelectorAll('.fr').forEach(function (b) {
			var n = self.nodes[+b.dataset.i].n;

			b.classList.toggle('match',
					   !!re && n !== -1 && re.test(n));
		});
		out.textContent = re ? 'matched: ' + (this.root.v ?
			(100 * matched / this.root.v).toFixed(2) : '0.00') +
			' % of samples' : '';
		out.dataset.pct = re && this.root.v ?
			100 * matched / this.root.v : 0;
	};

	document.querySelectorAll('table.sortable').forEach(sortable);

	var flames = [];

	document.querySelectorAll('div.flame').forEach(function (el) {
		var src = document.getElementById(el.dataset.source);

		flames.push(new Flame(el, JSON.parse(src.textContent)));
	});

	// The call graph's "focus" buttons: that function's stacks only.
	document.querySelectorAll('button.focus').forEach(function (b) {
		b.hidden = !flames.length;
		b.addEventListener('click', function () {
			var name = b.closest('.fn').querySelector('h3')
				.textContent;

			flames[0].setFocus(name);
			flames[0].el.scrollIntoView();
		});
	});

	// A row of the threads table shows that thread's flame graph.
	document.querySelectorAll('#threads tbody tr').forEach(function (r) {
		var f = flames[0], tid = +r.cells[0].textContent;

		if (!f || !f.el.querySelector('.thread option[value="' + tid +
					      '"]'))
			return;
		r.classList.add('pick');
		r.title = 'show this thread in the flame graph';
		r.addEventListener('click', function () {
			f.setThread(tid);
			f.el.scrollIntoView();
		});
	});

	// The selected function stands out (CSS :target does the rest).
	function select() {
		var id = location.hash.slice(1);

		document.querySelectorAll('.selected').forEach(function (e) {
			e.classList.remove('selected');
		});
		if (!id)
			return;
		document.querySelectorAll('tr[data-node="' + id.slice(1) +
					  '"]').forEach(function (r) {
			r.classList.add('selected');
		});
	}
	window.addEventListener('hashchange', select);
	window.addEventListener('resize', function () {
		flames.forEach(function (f) { f.render(); });
	});
	select();
	document.body.dataset.ready = '1';
	document.body.dataset.readyMs = performance.now().toFixed(0);
})();
