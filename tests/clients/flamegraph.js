// Opens a flame graph SVG (core/views/flamegraph.c) in headless Chromium at
// 1280x800 and tells whether its first screen shows the graph: every frame
// of the bottom row (the callers of everything) lies inside the window and
// is what the browser finds at its centre (not hidden under the header),
// and the Search button is in view too.
//
//   node flamegraph.js [--no-script] FILE.svg
//
// Prints the document's height and what was seen.  Exit 0: the graph is on
// the first screen; 1: it is not; 2: the browser could not be driven.
// --no-script opens it with JavaScript off (as an image viewer would).
'use strict';
const path = require('path');
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const PAGE_TIMEOUT_MS = 120000;

async function run(file, scripts) {
	let browser;
	try {
		browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
	} catch (err) {
		console.log('cannot start ' + CHROMIUM + ': ' + err.message.split('\n')[0]);
		return 2;
	}
	try {
		const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, javaScriptEnabled: scripts });
		page.setDefaultTimeout(PAGE_TIMEOUT_MS);
		const errors = [];
		page.on('pageerror', e => errors.push(e.message));
		await page.goto('file://' + path.resolve(file), { waitUntil: 'load' });
		// Frames and the header are evaluated from outside the page's own
		// scripts, so this works with them off as well.
		const seen = await page.evaluate(() => {
			const inView = r => r.width > 0 && r.top >= 0 && r.left >= 0 &&
				r.bottom <= window.innerHeight && r.right <= window.innerWidth;
			const bottomRow = Array.from(document.querySelectorAll('g.f[data-d="1"]'));
			const hidden = bottomRow.filter(g => {
				const r = g.querySelector('rect').getBoundingClientRect();
				if (!inView(r))
					return true;
				const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
				return !hit || !g.contains(hit);
			}).map(g => g.getAttribute('data-n'));
			const search = document.getElementById('search');
			return {
				height: document.documentElement.scrollHeight,
				scrolled: window.scrollY,
				bottomRow: bottomRow.length,
				hidden,
				searchInView: !!search && inView(search.getBoundingClientRect()),
			};
		});
		const shown = seen.bottomRow > 0 && seen.hidden.length === 0 && seen.searchInView;
		console.log(`height ${seen.height} px, scrolled ${seen.scrolled} px; bottom row: ${seen.bottomRow} frame(s)` +
			(seen.hidden.length ? `, not in view: ${seen.hidden.join(' ')}` : ', all in view') +
			`; Search button ${seen.searchInView ? 'in view' : 'not in view'}` +
			(errors.length ? '; page errors: ' + errors.join('; ') : ''));
		return shown && !errors.length ? 0 : 1;
	} finally {
		await browser.close();
	}
}

const args = process.argv.slice(2);
const scripts = args[0] !== '--no-script';
const file = scripts ? args[0] : args[1];
if (!file) {
	console.log('usage: flamegraph.js [--no-script] FILE.svg');
	process.exit(2);
}
run(file, scripts).then(code => process.exit(code), err => {
	console.log('driving the browser failed: ' + err.message.split('\n')[0]);
	process.exit(2);
});
