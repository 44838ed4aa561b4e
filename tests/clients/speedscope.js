// Opens one profile in speedscope's own page in headless Chromium, the way a
// user does (the page served over http on 127.0.0.1, the file passed as
// #profileURL= or picked with the Browse button), and reports what
// speedscope made of it.
//
//   node speedscope.js [--import url|browse] [--expect-error] \
//       SPEEDSCOPE_RELEASE_DIR FILE NAME...
//
// Success (exit 0): speedscope imported FILE without error, and every NAME
// is a symbol in its sandwich view's table (searched for, in each of the
// profiles speedscope split the file into: one per thread for perf script
// text).  With --expect-error, success is speedscope refusing the file.
// Exit 1: the check failed, with the reason on stdout; exit 2: the browser
// could not be driven at all.
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
// Guards against a hung page only; an import that works finishes far sooner.
const PAGE_TIMEOUT_MS = 120000;

function parseArgs(argv) {
	const opts = { importVia: 'url', expectError: false, rest: [] };
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === '--import')
			opts.importVia = argv[++i];
		else if (argv[i] === '--expect-error')
			opts.expectError = true;
		else
			opts.rest.push(argv[i]);
	}
	if (opts.rest.length < 2 || !['url', 'browse'].includes(opts.importVia))
		throw new Error('usage: speedscope.js [--import url|browse] [--expect-error] DIR FILE NAME...');
	[opts.release, opts.file, ...opts.names] = opts.rest;
	return opts;
}

// speedscope's page and the one profile, under its own name: speedscope
// picks the importer from the name as well as the contents.
function serve(release, file) {
	const profilePath = '/' + encodeURIComponent(path.basename(file));
	const server = http.createServer((req, res) => {
		const urlPath = new URL(req.url, 'http://127.0.0.1').pathname;
		let target;
		if (urlPath === profilePath)
			target = file;
		else if (urlPath === '/')
			target = path.join(release, 'index.html');
		else
			target = path.join(release, path.normalize(decodeURIComponent(urlPath)));
		if (!target.startsWith(release) && target !== file) {
			res.writeHead(403);
			res.end();
			return;
		}
		fs.readFile(target, (err, data) => {
			if (err) {
				res.writeHead(404);
				res.end();
				return;
			}
			res.writeHead(200);
			res.end(data);
		});
	});
	return new Promise((resolve, reject) => {
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => resolve({ server, profilePath }));
	});
}

// How the import ended: speedscope names the profile in the document title
// on success; a parser exception shows "Something went wrong"; an
// unrecognized or empty file is an alert().
async function importOutcome(page, events) {
	const deadline = Date.now() + PAGE_TIMEOUT_MS;
	while (Date.now() < deadline) {
		if (events.dialogs.length)
			return { ok: false, why: 'speedscope said: ' + events.dialogs.join('; ') };
		const state = await page.evaluate(() => ({
			title: document.title,
			failed: document.body.innerText.includes('Something went wrong'),
		}));
		if (state.failed) {
			await Promise.all(events.pending);
			return { ok: false, why: 'speedscope failed to import: ' + (events.importErrors.join('; ') || '(no message)') };
		}
		if (state.title !== 'speedscope')
			return { ok: true };
		await page.waitForTimeout(100);
	}
	return { ok: false, why: 'speedscope neither imported nor refused the file' };
}

// Number of profiles: the toolbar shows "(i/N)" when there is more than one.
async function profileCount(page) {
	const text = await page.evaluate(() => document.body.innerText);
	const m = text.match(/\((\d+)\/(\d+)\)/);
	return m ? Number(m[2]) : 1;
}

// The search box, which Ctrl+F opens.  A press that lands while the page
// is busy (a loaded machine) may be lost, and switching profiles may close
// the box: pressed again until it shows, rather than waiting out
// PAGE_TIMEOUT_MS on a box that is not there.
async function searchBox(page) {
	const box = page.locator('input:visible').first();
	for (let tries = 0; tries < 20; tries++) {
		if (await box.isVisible())
			return box;
		await page.keyboard.press('Control+f');
		await box.waitFor({ timeout: 1000 }).catch(() => {});
	}
	return box;
}

// The sandwich view's table is plain DOM: its symbol cells hold the names.
// Filtered by the search box, it shows either the name or speedscope's
// "No symbol names match" line for that query.
async function symbolShown(page, name) {
	await (await searchBox(page)).fill(name);
	await page.waitForFunction(want => document.body.innerText.includes(`No symbol names match query "${want}"`) ||
		Array.from(document.querySelectorAll('td, span')).some(e => e.children.length === 0 && e.textContent === want),
	name, { timeout: PAGE_TIMEOUT_MS });
	return page.evaluate(want => Array.from(document.querySelectorAll('td, span'))
		.some(e => e.children.length === 0 && e.textContent === want), name);
}

// Which profile the toolbar shows: "(i/N)", or 1 when there is one.
async function currentProfile(page) {
	const text = await page.evaluate(() => document.body.innerText);
	const m = text.match(/\((\d+)\/(\d+)\)/);
	return m ? Number(m[1]) : 1;
}

// 'n' is speedscope's "next profile" key, ignored while typing.  A press
// that lands while the page is busy (a loaded machine) may be lost, or two
// may land at once: every profile is visited whatever the order, with a
// bounded number of presses.
async function namesInProfiles(page, names) {
	const count = await profileCount(page);
	const found = new Set(), visited = new Set();
	await page.keyboard.press('Control+f');
	for (let presses = 0; visited.size < count && presses <= 4 * count; presses++) {
		const at = await currentProfile(page);
		if (!visited.has(at)) {
			visited.add(at);
			for (const name of names) {
				if (!found.has(name) && await symbolShown(page, name))
					found.add(name);
			}
		}
		if (visited.size === count)
			break;
		await page.evaluate(() => document.activeElement && document.activeElement.blur());
		await page.keyboard.press('n');
		await page.waitForFunction(was => {
			const m = document.body.innerText.match(/\((\d+)\/(\d+)\)/);
			return m && Number(m[1]) !== was;
		}, at, { timeout: 5000 }).catch(err => {
			if (!/Timeout/.test(err.message))
				throw err;
		});
	}
	return { count, found };
}

async function run(opts) {
	const file = path.resolve(opts.file);
	const release = path.resolve(opts.release);
	const { server, profilePath } = await serve(release, file);
	const base = `http://127.0.0.1:${server.address().port}/`;
	let browser;
	const events = { dialogs: [], importErrors: [], importer: null, pageErrors: [], pending: [] };
	try {
		browser = await chromium.launch({
			executablePath: CHROMIUM,
			// speedscope draws with WebGL and loads nothing without it:
			// software GL, as on a machine without a GPU.
			args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
		});
	} catch (err) {
		server.close();
		console.log('cannot start ' + CHROMIUM + ': ' + err.message.split('\n')[0]);
		return 2;
	}
	try {
		const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
		page.setDefaultTimeout(PAGE_TIMEOUT_MS);
		page.on('dialog', d => { events.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
		page.on('pageerror', e => events.pageErrors.push(e.message));
		page.on('console', msg => {
			const text = msg.text();
			if (/^Importing /.test(text))
				events.importer = text;
			if (/^Failed to load format/.test(text)) {
				// The exception is the second argument, a handle into the page.
				const args = msg.args();
				events.pending.push((args.length > 1 ? args[1].evaluate(e => String(e && e.message || e)) : Promise.resolve(''))
					.catch(() => '').then(err => events.importErrors.push(err || text)));
			}
		});
		if (opts.importVia === 'url') {
			await page.goto(`${base}#profileURL=${encodeURIComponent(profilePath)}&view=sandwich`);
		} else {
			await page.goto(`${base}#view=sandwich`);
			// The big blue button: a label for a file input.
			const [chooser] = await Promise.all([
				page.waitForEvent('filechooser'),
				page.getByText('Browse', { exact: true }).click(),
			]);
			await chooser.setFiles(file);
		}
		const outcome = await importOutcome(page, events);
		if (opts.expectError) {
			console.log(outcome.ok ? 'speedscope imported the file it should refuse' : outcome.why);
			return outcome.ok ? 1 : 0;
		}
		if (!outcome.ok) {
			console.log(outcome.why);
			return 1;
		}
		// The title is set before the profile is shown: wait for its table.
		await page.waitForFunction(() => document.body.innerText.includes('Symbol Name'), null,
			{ timeout: PAGE_TIMEOUT_MS });
		const { count, found } = await namesInProfiles(page, opts.names);
		const missing = opts.names.filter(n => !found.has(n));
		console.log(`${events.importer || 'importer unknown'}; ${count} profile(s); found: ${[...found].join(' ') || '-'}` +
			(missing.length ? `; missing: ${missing.join(' ')}` : ''));
		if (events.pageErrors.length)
			console.log('page errors: ' + events.pageErrors.join('; '));
		return missing.length || events.pageErrors.length ? 1 : 0;
	} finally {
		await browser.close();
		server.close();
	}
}

let opts;
try {
	opts = parseArgs(process.argv.slice(2));
} catch (err) {
	console.log(err.message);
	process.exit(2);
}
run(opts).then(code => process.exit(code), err => {
	console.log('driving the browser failed: ' + err.message.split('\n')[0]);
	process.exit(2);
});
