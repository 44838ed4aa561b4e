/* Folded stacks -> a self-contained interactive SVG flame graph, in the
 * manner of Brendan Gregg's flamegraph.pl: one rectangle per call-path node,
 * width proportional to its weight, root at the bottom, children sorted by
 * name; embedded JavaScript gives hover details, click-to-zoom and search,
 * so the file needs nothing but a browser. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/archive/staging.h"
#include "flamegraph.h"
#include "lib/decimal.h"
#include "lib/folded.h"
#include "lib/hash.h"
#include "lib/sanitize.h"
#include "lib/vec.h"

#define IMAGE_WIDTH 1200.0
#define FRAME_HEIGHT 16
#define PAD_SIDE 10.0
#define PAD_TOP 56
#define PAD_BOTTOM 36
#define MIN_WIDTH_PX 0.1
#define CHAR_WIDTH_PX 7.0

struct node {
	char *name;
	uint64_t weight; /* inclusive */
	struct node *parent;
	struct node **children;
	size_t n_children, cap_children;
};

/* A new last child of parent, named name[0..len). */
static struct node *new_child(struct node *parent, const char *name, size_t len)
{
	struct node *nd = calloc(1, sizeof(*nd)), **grown;

	if (!nd)
		return NULL;
	nd->name = strndup(name, len);
	grown = tr_vec_grow(parent->children, &parent->cap_children, parent->n_children + 1,
			    sizeof(*grown), 4);
	if (grown)
		parent->children = grown; /* the old array may be gone */
	if (!nd->name || !grown) {
		free(nd->name);
		free(nd);
		return NULL;
	}
	nd->parent = parent;
	parent->children[parent->n_children++] = nd;
	return nd;
}

static void free_tree(struct node *nd)
{
	for (size_t i = 0; i < nd->n_children; i++)
		free_tree(nd->children[i]);
	free(nd->children);
	free(nd->name);
	free(nd);
}

static void free_children(struct node *nd)
{
	for (size_t i = 0; i < nd->n_children; i++)
		free_tree(nd->children[i]);
	free(nd->children);
	nd->children = NULL;
	nd->n_children = nd->cap_children = 0;
}

/* Sorted input (what tr_folded_write writes) is folded with the graph's
 * final scale known from a first pass: the lines under a node form one
 * run (every string with a given prefix is contiguous in sorted order), so
 * once a line no longer starts with a node's path the node is final, and
 * if it is too narrow to draw, its subtree goes.  Memory then holds what
 * is drawn and the narrow children of what is drawn, not every path of a
 * session that saw hundreds of thousands of processes.  The picture is
 * the same: render_node skips a narrow node with everything under it. */
struct sorted_build {
	double scale;
	struct node **path;   /* the previous line's nodes, path[0] the root */
	size_t *path_end;     /* where path[d]'s frame ends in prev */
	size_t depth, cap, cap_end;
	char *prev;           /* the previous line's stack */
	size_t prev_len, prev_cap;
};

/* Room for path[depth] and path_end[depth]. */
static int sb_reserve(struct sorted_build *b, size_t depth)
{
	struct node **path = tr_vec_grow(b->path, &b->cap, depth + 1, sizeof(*path), 16);
	size_t *ends;

	if (!path)
		return -ENOMEM;
	b->path = path;
	ends = tr_vec_grow(b->path_end, &b->cap_end, depth + 1, sizeof(*ends), 16);
	if (!ends)
		return -ENOMEM;
	b->path_end = ends;
	return 0;
}

/* The child of `at` named name[0..len): nodes are created in the input's
 * order, so the siblings made after it all have names it begins (they
 * sort between its line and its children's): look back while they do. */
static struct node *sorted_child(struct node *at, const char *name, size_t len)
{
	for (size_t i = at->n_children; i-- > 0;) {
		struct node *nd = at->children[i];

		if (strncmp(nd->name, name, len) != 0)
			break;
		if (nd->name[len] == '\0')
			return nd;
	}
	return new_child(at, name, len);
}

/* How many bytes a[0..a_len) and b[0..b_len) begin with alike: whole
 * blocks compared at once first. */
static size_t shared_prefix(const char *a, size_t a_len, const char *b, size_t b_len)
{
	size_t n = 0, end = a_len < b_len ? a_len : b_len;

	while (n + 64 <= end && memcmp(a + n, b + n, 64) == 0)
		n += 64;
	while (n < end && a[n] == b[n])
		n++;
	return n;
}

/* How many of the previous line's frames (b->path[1..]) `line`, sharing
 * its first `common` bytes, also begins with, as far as final goes: a
 * frame stays open while the line begins with its path, whatever follows
 * (after "a;bc" and "a;bc.x", "a;bc;y" may still come, as '.' sorts
 * before ';'). */
static size_t frames_open(const struct sorted_build *b, size_t common)
{
	size_t open = 0;

	while (open < b->depth && b->path_end[open + 1] <= common)
		open++;
	return open;
}

/* One stack ("a;b;c", sorted after the previous one) of `weight`.  Sorted
 * lines share long beginnings (a deep stack's outer frames): the shared
 * bytes are found in one pass, and the frames within them are the nodes
 * the previous line walked, not looked up again. */
static int add_sorted_stack(struct sorted_build *b, struct node *root, const char *line,
			    uint64_t weight)
{
	size_t common, open, same, len, depth, line_len = strlen(line);
	struct node *at;
	const char *frame;

	common = shared_prefix(line, line_len, b->prev, b->prev_len);
	open = frames_open(b, common);
	/* The previous line's nodes whose path this line does not begin
	 * are final: the narrow ones lose their subtrees. */
	for (size_t d = b->depth; d > open; d--)
		if (b->path[d]->weight * b->scale < MIN_WIDTH_PX)
			free_children(b->path[d]);
	/* The same node as the previous line's where the frame ends here too
	 * ("a;bc" is not "a;bcd"'s). */
	same = open;
	if (same && b->path_end[same] == common && line[common] != ';' && line[common] != '\0')
		same--;
	root->weight += weight;
	if (sb_reserve(b, 1) < 0)
		return -ENOMEM;
	b->path[0] = root;
	for (size_t d = 1; d <= same; d++)
		b->path[d]->weight += weight;
	at = b->path[same];
	depth = same;
	frame = same ? (line[b->path_end[same]] ? line + b->path_end[same] + 1 : NULL) : line;
	while (frame) {
		const char *semi = strchr(frame, ';');

		len = semi ? (size_t)(semi - frame) : strlen(frame);
		if (len) {
			at = sorted_child(at, frame, len);
			if (!at || sb_reserve(b, depth + 2) < 0)
				return -ENOMEM;
			at->weight += weight;
			b->path[++depth] = at;
			b->path_end[depth] = (size_t)(frame - line) + len;
		}
		frame = semi ? semi + 1 : NULL;
	}
	b->depth = depth;
	if (line_len + 1 > b->prev_cap) {
		char *grown = realloc(b->prev, line_len + 1);

		if (!grown)
			return -ENOMEM;
		b->prev = grown;
		b->prev_cap = line_len + 1;
	}
	memcpy(b->prev, line, line_len + 1);
	b->prev_len = line_len;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(struct node *const *)a)->name, (*(struct node *const *)b)->name);
}

static int max_depth(struct node *nd, double scale)
{
	int deepest = 0;

	for (size_t i = 0; i < nd->n_children; i++) {
		struct node *c = nd->children[i];

		if (c->weight * scale < MIN_WIDTH_PX)
			continue;
		int d = 1 + max_depth(c, scale);
		if (d > deepest)
			deepest = d;
	}
	return deepest;
}

/* Length of the valid UTF-8 sequence at s, or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates, beyond U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Names come from symbol tables and JIT maps the traced program wrote:
 * lib/sanitize.h's rule first (control characters, DEL, C1, invalid UTF-8
 * become '?', as in every other output), into `buf` (grown as needed),
 * which is returned; NULL when out of memory. */
static const unsigned char *clean_name(const char *name, char **buf, size_t *cap)
{
	size_t len = strlen(name) + 1;

	if (len > *cap) {
		char *grown = realloc(*buf, len);

		if (!grown)
			return NULL;
		*buf = grown;
		*cap = len;
	}
	tr_sanitize_text(*buf, len, name);
	return (const unsigned char *)*buf;
}

/* A node's markup is built in a buffer and written in one go: formatted
 * with fprintf, attribute by attribute, and its name escaped three times,
 * it was half the graph's time for a .NET service's stacks. */
struct line_buf {
	char *s;
	size_t len, cap;
	int nomem;
};

static void lb_put(struct line_buf *lb, const void *data, size_t n)
{
	char *grown = tr_vec_grow(lb->s, &lb->cap, lb->len + n, 1, 4096);

	if (!grown) {
		lb->nomem = 1;
		return;
	}
	lb->s = grown;
	memcpy(lb->s + lb->len, data, n);
	lb->len += n;
}

static void lb_str(struct line_buf *lb, const char *str)
{
	lb_put(lb, str, strlen(str));
}

static void lb_u64(struct line_buf *lb, uint64_t v)
{
	char digits[TR_DECIMAL_MAX], *end = digits + sizeof(digits), *d = tr_decimal(end, v);

	lb_put(lb, d, (size_t)(end - d));
}

/* A length in pixels as "%.1f" writes it. */
static void lb_px(struct line_buf *lb, double v)
{
	uint64_t tenths = (uint64_t)(v * 10 + 0.5);
	char tenth[2] = { '.', (char)('0' + tenths % 10) };

	lb_u64(lb, tenths / 10);
	lb_put(lb, tenth, 2);
}

/* `s` made clean by lib/sanitize.h's rule, markup escaped; what is left
 * of an invalid sequence or a control character becomes '?'.  Plain runs
 * go in one copy.  max_chars counts characters, never cutting one. */
static void lb_markup(struct line_buf *lb, const unsigned char *s, size_t max_chars)
{
	const unsigned char *run = s;

	for (size_t chars = 0; *s && chars < max_chars; chars++) {
		size_t n = *s < 0x80 ? 1 : utf8_len(s);
		const char *replacement;

		switch (*s) {
		case '<': replacement = "&lt;"; break;
		case '>': replacement = "&gt;"; break;
		case '&': replacement = "&amp;"; break;
		case '"': replacement = "&quot;"; break;
		case '\'': replacement = "&apos;"; break;
		default: replacement = n == 0 || (*s < 0x20 && *s != '\t') ? "?" : NULL;
		}
		if (!replacement) {
			s += n;
			continue;
		}
		lb_put(lb, run, (size_t)(s - run));
		lb_str(lb, replacement);
		s += n ? n : 1;
		run = s;
	}
	lb_put(lb, run, (size_t)(s - run));
}

/* The graph's title, made clean and escaped as the frames' names are. */
static void put_escaped(FILE *out, const char *str)
{
	struct line_buf lb = { 0 };
	char *buf = NULL;
	size_t cap = 0;
	const unsigned char *clean = clean_name(str, &buf, &cap);

	if (clean)
		lb_markup(&lb, clean, SIZE_MAX);
	if (!lb.nomem && lb.len)
		fwrite(lb.s, 1, lb.len, out);
	free(lb.s);
	free(buf);
}

/* Warm colours like flamegraph.pl; off-CPU frames (from the wall view) blue,
 * so on- and off-CPU time stand apart.  Hashing keeps a function's colour
 * the same across graphs. */
static void lb_colour(struct line_buf *lb, const char *name, size_t len)
{
	uint64_t h = tr_fnv1a_more(TR_FNV1A_BASIS, name, len);
	unsigned v1 = h & 0xff, v2 = (h >> 8) & 0xff, v3 = (h >> 16) & 0xff;
	int off_cpu = strstr(name, "off-cpu") != NULL;

	lb_str(lb, "rgb(");
	lb_u64(lb, off_cpu ? 60 + v1 * 50 / 255 : 205 + v1 * 50 / 255);
	lb_put(lb, ",", 1);
	lb_u64(lb, off_cpu ? 110 + v2 * 80 / 255 : v2 * 230 / 255);
	lb_put(lb, ",", 1);
	lb_u64(lb, off_cpu ? 200 + v3 * 55 / 255 : v3 * 55 / 255);
	lb_put(lb, ")", 1);
}

struct render {
	FILE *out;
	double scale; /* px per unit of weight */
	uint64_t total;
	int depth_max;
	const char *unit;
	unsigned long frames;
	char *name_buf; /* a node's name made clean, reused */
	size_t name_cap;
	struct line_buf line, markup; /* a node's <g>, its name escaped */
};

/* One node's <g>: its name (data-n, the title, the label), weight and
 * place. */
static void node_markup(struct render *r, const struct node *nd, const unsigned char *clean,
			uint64_t offset, int depth)
{
	double x = PAD_SIDE + offset * r->scale, w = nd->weight * r->scale;
	int y = PAD_TOP + (r->depth_max - depth) * FRAME_HEIGHT;
	uint64_t hundredths = (uint64_t)(10000.0 * nd->weight / r->total + 0.5);
	size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_WIDTH_PX) : 0, name_len = strlen(nd->name);
	struct line_buf *lb = &r->line;
	char cents[3] = { '.', (char)('0' + hundredths % 100 / 10), (char)('0' + hundredths % 10) };

	r->markup.len = 0;
	lb_markup(&r->markup, clean, SIZE_MAX);
	lb->len = 0;
	lb_str(lb, "<g class=\"f\" data-x=\"");
	lb_u64(lb, offset);
	lb_str(lb, "\" data-w=\"");
	lb_u64(lb, nd->weight);
	lb_str(lb, "\" data-d=\"");
	lb_u64(lb, (uint64_t)depth);
	lb_str(lb, "\" data-n=\"");
	lb_put(lb, r->markup.s, r->markup.len);
	lb_str(lb, "\"><title>");
	lb_put(lb, r->markup.s, r->markup.len);
	lb_str(lb, " (");
	lb_u64(lb, nd->weight);
	lb_put(lb, " ", 1);
	lb_str(lb, r->unit);
	lb_str(lb, ", ");
	lb_u64(lb, hundredths / 100);
	lb_put(lb, cents, 3);
	lb_str(lb, "%)</title><rect x=\"");
	lb_px(lb, x);
	lb_str(lb, "\" y=\"");
	lb_u64(lb, (uint64_t)y);
	lb_str(lb, "\" width=\"");
	lb_px(lb, w);
	lb_str(lb, "\" height=\"");
	lb_u64(lb, FRAME_HEIGHT - 1);
	lb_str(lb, "\" fill=\"");
	lb_colour(lb, nd->name, name_len);
	lb_str(lb, "\" rx=\"2\"/><text x=\"");
	lb_px(lb, x + 3);
	lb_str(lb, "\" y=\"");
	lb_u64(lb, (uint64_t)(y + FRAME_HEIGHT - 4));
	lb_str(lb, "\">");
	if (fit >= 3 && name_len <= fit) {
		lb_put(lb, r->markup.s, r->markup.len);
	} else if (fit >= 3) {
		lb_markup(lb, clean, fit - 2);
		lb_put(lb, "..", 2);
	}
	lb_str(lb, "</text></g>\n");
}

static void render_node(struct render *r, struct node *nd, uint64_t offset, int depth)
{
	const unsigned char *clean;

	if (nd->weight * r->scale < MIN_WIDTH_PX)
		return;
	if (depth > 0 && (clean = clean_name(nd->name, &r->name_buf, &r->name_cap))) {
		node_markup(r, nd, clean, offset, depth);
		if (!r->line.nomem && !r->markup.nomem)
			fwrite(r->line.s, 1, r->line.len, r->out);
		r->frames++;
	}
	if (nd->n_children > 1)
		qsort(nd->children, nd->n_children, sizeof(*nd->children), by_name);
	for (size_t i = 0; i < nd->n_children; i++) {
		render_node(r, nd->children[i], offset, depth + 1);
		offset += nd->children[i]->weight;
	}
}

/* A deep graph (deep recursion; a runaway stack of garbage frames) is
 * taller than a window, and a browser opens a document at its top, where
 * only the few deepest frames are: a blank first screen.  So the script
 * starts the view at the bottom, where the root and the widest frames are,
 * and keeps the title and buttons at the top of the window while the graph
 * scrolls under them.  Not chosen: an icicle layout (root at the top)
 * breaks the convention flamegraph.pl's readers know, and cutting stacks
 * at a depth limit would drop the leaves of deep recursion, where the time
 * is spent.  Where scripts do not run (an <img>), the picture is scaled to
 * fit anyway. */
static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"'use strict';\n"
	"var W, PAD, frames, details, unzoomBtn, matchedTxt, zoomed = null, searching = null;\n"
	"function init() {\n"
	"  var svg = document.documentElement, header = document.getElementById('header');\n"
	"  W = +svg.getAttribute('data-width'); PAD = +svg.getAttribute('data-pad');\n"
	"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
	"  details = document.getElementById('details');\n"
	"  unzoomBtn = document.getElementById('unzoom');\n"
	"  matchedTxt = document.getElementById('matched');\n"
	"  frames.forEach(function (g) {\n"
	"    g.addEventListener('mouseover', function () {\n"
	"      details.textContent = g.querySelector('title').textContent; });\n"
	"    g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
	"    g.addEventListener('click', function () { zoom(g); });\n"
	"  });\n"
	"  unzoomBtn.addEventListener('click', unzoom);\n"
	"  function pinHeader() {\n"
	"    header.setAttribute('transform', 'translate(0,' + window.scrollY + ')'); }\n"
	"  window.addEventListener('scroll', pinHeader);\n"
	"  window.scrollTo(0, svg.scrollHeight);\n"
	"  pinHeader(); /* now: the scroll event comes later */\n"
	"  document.getElementById('search').addEventListener('click', askSearch);\n"
	"  window.addEventListener('keydown', function (e) {\n"
	"    if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); askSearch(); }\n"
	"    if (e.key === 'Escape') { unzoom(); clearSearch(); }\n"
	"  });\n"
	"}\n"
	"function label(g) {\n"
	"  var r = g.querySelector('rect'), t = g.querySelector('text'), n = g.getAttribute('data-n');\n"
	"  var w = +r.getAttribute('width'), fit = Math.floor((w - 6) / 7);\n"
	"  t.setAttribute('x', +r.getAttribute('x') + 3);\n"
	"  t.textContent = fit < 3 ? '' : (n.length <= fit ? n : n.substring(0, fit - 2) + '..');\n"
	"}\n"
	"function place(g, x, w) {\n"
	"  var r = g.querySelector('rect');\n"
	"  r.setAttribute('x', x.toFixed(1)); r.setAttribute('width', w.toFixed(1)); label(g);\n"
	"}\n"
	"function zoom(z) {\n"
	"  var zx = +z.getAttribute('data-x'), zw = +z.getAttribute('data-w'), zd = +z.getAttribute('data-d');\n"
	"  zoomed = z;\n"
	"  frames.forEach(function (g) {\n"
	"    var x = +g.getAttribute('data-x'), w = +g.getAttribute('data-w'), d = +g.getAttribute('data-d');\n"
	"    if (d >= zd && x >= zx && x + w <= zx + zw) {\n"
	"      g.style.display = ''; g.style.opacity = ''; place(g, PAD + (x - zx) / zw * W, w / zw * W);\n"
	"    } else if (d < zd && x <= zx && x + w >= zx + zw) {\n"
	"      g.style.display = ''; g.style.opacity = '0.6'; place(g, PAD, W);\n"
	"    } else { g.style.display = 'none'; }\n"
	"  });\n"
	"  unzoomBtn.style.opacity = '1';\n"
	"  if (searching) search(searching);\n"
	"}\n"
	"function unzoom() {\n"
	"  var total = +document.documentElement.getAttribute('data-total');\n"
	"  zoomed = null;\n"
	"  frames.forEach(function (g) {\n"
	"    g.style.display = ''; g.style.opacity = '';\n"
	"    place(g, PAD + +g.getAttribute('data-x') / total * W, +g.getAttribute('data-w') / total * W);\n"
	"  });\n"
	"  unzoomBtn.style.opacity = '0';\n"
	"  if (searching) search(searching);\n"
	"}\n"
	"function clearSearch() {\n"
	"  searching = null; matchedTxt.textContent = ' ';\n"
	"  frames.forEach(function (g) {\n"
	"    var r = g.querySelector('rect');\n"
	"    if (r.hasAttribute('data-fill')) { r.setAttribute('fill', r.getAttribute('data-fill')); r.removeAttribute('data-fill'); }\n"
	"  });\n"
	"}\n"
	"function askSearch() {\n"
	"  var term = window.prompt('Search for (regular expression):', searching || '');\n"
	"  if (term === null) return;\n"
	"  if (term === '') { clearSearch(); return; }\n"
	"  search(term);\n"
	"}\n"
	"function search(term) {\n"
	"  var re, total = +document.documentElement.getAttribute('data-total'), hits = [], sum = 0, end = -1;\n"
	"  try { re = new RegExp(term); } catch (e) { matchedTxt.textContent = 'bad expression'; return; }\n"
	"  clearSearch(); searching = term;\n"
	"  var base = zoomed ? +zoomed.getAttribute('data-w') : total;\n"
	"  frames.forEach(function (g) {\n"
	"    if (g.style.display === 'none' || !re.test(g.getAttribute('data-n'))) return;\n"
	"    var r = g.querySelector('rect');\n"
	"    r.setAttribute('data-fill', r.getAttribute('fill')); r.setAttribute('fill', 'rgb(230,0,230)');\n"
	"    hits.push([+g.getAttribute('data-x'), +g.getAttribute('data-w')]);\n"
	"  });\n"
	"  /* Nested matches must not be counted twice. */\n"
	"  hits.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"  hits.forEach(function (h) { if (h[0] >= end) { sum += h[1]; end = h[0] + h[1]; } });\n"
	"  matchedTxt.textContent = 'Matched: ' + (100 * sum / base).toFixed(2) + '%';\n"
	"}\n"
	"window.addEventListener('load', init);\n"
	"]]></script>\n";

/* The SVG around the frames: size, style, script, background, and the
 * header drawn last, over the frames (the script keeps it at the top of
 * the window as the graph scrolls under it). */
static void write_svg(struct render *r, struct node *root, const char *title)
{
	FILE *svg = r->out;
	int height = PAD_TOP + (r->depth_max + 1) * FRAME_HEIGHT + PAD_BOTTOM;

	fprintf(svg,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%d\" viewBox=\"0 0 %.0f %d\" data-width=\"%.0f\" data-pad=\"%.0f\" "
		"data-total=\"%" PRIu64 "\">\n",
		IMAGE_WIDTH + 2 * PAD_SIDE, height, IMAGE_WIDTH + 2 * PAD_SIDE, height, IMAGE_WIDTH,
		PAD_SIDE, r->total);
	fputs("<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
	      "g.f { cursor: pointer; } g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	      "#title { font-size: 17px; } .button { fill: #006; cursor: pointer; }</style>\n",
	      svg);
	fputs(script, svg);
	fprintf(svg, "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text id=\"matched\" x=\"%.0f\" y=\"%d\" text-anchor=\"end\"> </text>\n"
		"<text id=\"details\" x=\"%.0f\" y=\"%d\"> </text>\n",
		IMAGE_WIDTH + PAD_SIDE, height - 12, PAD_SIDE, height - 12);
	if (root->weight == 0)
		fprintf(svg, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">no stacks were "
			"recorded</text>\n", (IMAGE_WIDTH + 2 * PAD_SIDE) / 2, PAD_TOP + FRAME_HEIGHT);
	else
		render_node(r, root, 0, 0);
	fprintf(svg, "<g id=\"header\"><rect width=\"100%%\" height=\"%d\" "
		"fill=\"#f8f8f0\"/>\n<text id=\"title\" x=\"%.0f\" y=\"24\" text-anchor=\"middle\">",
		PAD_TOP - 4, (IMAGE_WIDTH + 2 * PAD_SIDE) / 2);
	put_escaped(svg, title ? title : "Flame Graph");
	fprintf(svg,
		"</text>\n<text x=\"%.0f\" y=\"44\">%" PRIu64 " %s in all</text>\n"
		"<text id=\"unzoom\" class=\"button\" x=\"%.0f\" y=\"24\" style=\"opacity:0\">"
		"Reset Zoom</text>\n<text id=\"search\" class=\"button\" x=\"%.0f\" y=\"24\" "
		"text-anchor=\"end\">Search</text>\n</g>\n",
		PAD_SIDE, root->weight, r->unit, PAD_SIDE, IMAGE_WIDTH + PAD_SIDE);
	fputs("</svg>\n", svg);
}

static struct node *new_root(void)
{
	struct node *root = calloc(1, sizeof(*root));

	if (root && !(root->name = strdup("all"))) {
		free(root);
		root = NULL;
	}
	return root;
}

/* The tree drawn, then freed. */
static int render(struct node *root, FILE *svg, const char *title, const char *unit)
{
	struct render r = { .out = svg, .unit = unit ? unit : "samples" };
	int ret = 0;

	r.total = root->weight ? root->weight : 1;
	r.scale = IMAGE_WIDTH / r.total;
	r.depth_max = root->weight ? max_depth(root, r.scale) : 0;
	write_svg(&r, root, title);
	if (ferror(svg))
		ret = -EIO;
	if (r.line.nomem || r.markup.nomem)
		ret = -ENOMEM;
	free(r.line.s);
	free(r.markup.s);
	free(r.name_buf);
	free_tree(root);
	return ret;
}

/* The lines of a set, in the units its file shows. */
struct set_pass {
	uint64_t divisor, total;
	struct sorted_build sb;
	struct node *root;
};

static uint64_t shown(const struct set_pass *p, uint64_t weight)
{
	return p->divisor == 1 ? weight : (weight + p->divisor / 2) / p->divisor;
}

static int sum_line(void *arg, const char *line, uint64_t weight)
{
	struct set_pass *p = arg;

	(void)line;
	p->total += shown(p, weight);
	return 0;
}

static int add_set_line(void *arg, const char *line, uint64_t weight)
{
	struct set_pass *p = arg;
	uint64_t v = shown(p, weight);

	return v ? add_sorted_stack(&p->sb, p->root, line, v) : 0;
}

int tr_flamegraph_write_set_pruned(const struct tr_folded *set, uint64_t divisor, FILE *svg,
				   const char *title, const char *unit, int prune)
{
	struct set_pass p = { .divisor = divisor ? divisor : 1, .root = new_root() };
	int ret;

	if (!p.root)
		return -ENOMEM;
	/* Sorted, as written: folded with the graph's scale known, pruned
	 * (an infinite scale keeps every node). */
	ret = tr_folded_each(set, sum_line, &p);
	p.sb.scale = prune ? IMAGE_WIDTH / (p.total ? p.total : 1) : HUGE_VAL;
	if (ret == 0)
		ret = tr_folded_each(set, add_set_line, &p);
	free(p.sb.path);
	free(p.sb.path_end);
	free(p.sb.prev);
	if (ret < 0) {
		free_tree(p.root);
		return ret;
	}
	return render(p.root, svg, title, unit);
}

int tr_flamegraph_write_set(const struct tr_folded *set, uint64_t divisor, FILE *svg,
			    const char *title, const char *unit)
{
	return tr_flamegraph_write_set_pruned(set, divisor, svg, title, unit, 1);
}

int tr_flamegraph_write(FILE *folded, FILE *svg, const char *title, const char *unit)
{
	struct tr_folded *set = tr_folded_new();
	int ret = set ? tr_folded_read(set, folded) : -ENOMEM;

	if (ret == 0)
		ret = tr_flamegraph_write_set(set, 1, svg, title, unit);
	tr_folded_free(set);
	return ret;
}

int tr_flamegraph_stage(struct tracerig_archive *ar, const struct tr_folded *set, uint64_t divisor,
			const char *svg_name, const char *title, const char *unit)
{
	FILE *out = tr_staging_fopen_entry(ar, svg_name);
	int ret;

	if (!out)
		return -errno;
	ret = tr_flamegraph_write_set(set, divisor, out, title, unit);
	if (fclose(out) != 0 && ret == 0)
		ret = -errno;
	return ret;
}
