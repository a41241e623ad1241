// What the real pi makes of one session file, as JSON on stdout: the entries it loaded, the messages
// it would send (its buildSessionContext, then convertToLlm), its leaf, and the /tree rows its own
// tree selector draws (each filter mode, at a given width, colours stripped).
//
// Usage: node pi_reference.mjs <pi package dir> <session file>... [--width N]...
//        [--search WORDS]...
// One JSON line per session file, in the order given (one node start for many files: starting
// node and importing pi's modules is nearly all of a run's time). A file pi's modules throw on
// gets {"error": "..."} as its line, and the others are still read.
// ("tree" holds the rows at each width given, 1000 columns when none is; "search" the rows of
// the default and "all" filters after typing each WORDS, at the first width.)
//
// Everything is computed by pi 0.73.1's compiled modules, imported from the npm package. The
// script adds only what pi cannot do on some odd files, and names each such step in
// "adjustments" so a reader of a comparison knows which part is pi and which is the rule issue 11
// asks for:
//   - "title-slot": pi rejects a file whose first line is not its header (and would then rewrite
//     it as a new session); the reference reads the file without oh-my-pi's title slot line.
//   - "self-parent": pi's context builder and tree selector walk parent links without a guard and
//     loop forever on an entry that is its own parent; the reference treats it as the root pi's
//     getTree() already shows it as.
//   - "reset-boundary": oh-my-pi's /clear marker; the context starts after the latest one on the
//     leaf's path (unless a compaction follows it), and oh-my-pi's bookkeeping types are hidden
//     in the default and no-tools filters.
// The session file is never touched: pi's SessionManager rewrites files it migrates or rejects,
// so it only ever sees a private copy.

import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const OMP_BOOKKEEPING = new Set(["reset_boundary", "model_usage", "title_change", "credential_pin", "archive",
	"service_tier_change", "mode_change", "session_init", "ttsr_injection"]);
const FILTERS = ["default", "no-tools", "user-only", "labeled-only", "all"];
const ANSI = /\u001b\[[0-9;?]*[ -\/]*[@-~]|\u001b\][^\u0007\u001b]*(\u0007|\u001b\\)/g;

function parseArgs(argv) {
	const positional = [];
	const widths = [];
	const searches = [];
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === "--width") widths.push(Number(argv[++i]));
		else if (argv[i] === "--search") searches.push(argv[++i] ?? "");
		else positional.push(argv[i]);
	}
	if (widths.length === 0) widths.push(1000);
	if (positional.length < 2 || !widths.every((width) => Number.isInteger(width) && width >= 10)) {
		process.stderr.write("usage: node pi_reference.mjs <pi package dir> <session file>... [--width N]...\n");
		process.exit(2);
	}
	return { packageDir: positional[0], sessionFiles: positional.slice(1), widths, searches };
}

async function load(packageDir, relative) {
	return import(pathToFileURL(join(packageDir, "dist", relative)).href);
}

/** The file's text without oh-my-pi's title slot line (pi's own trim() already drops a BOM). */
function stripTitleSlot(text, adjustments) {
	const newline = text.indexOf("\n");
	if (newline > 0) {
		try {
			const first = JSON.parse(text.slice(0, newline));
			if (first && first.type === "title" && first.v === 1) {
				adjustments.push("title-slot");
				text = text.slice(newline + 1);
			}
		} catch {
			// not JSON: pi skips such a line itself
		}
	}
	return text;
}

/** Entries whose parentId is their own id get a null parent (pi's getTree shows them as roots). */
function unloopSelfParents(text, adjustments) {
	let changed = false;
	const lines = text.split("\n").map((line) => {
		try {
			const entry = JSON.parse(line);
			if (entry && entry.type !== "session" && entry.parentId !== null && entry.parentId === entry.id) {
				changed = true;
				entry.parentId = null;
				return JSON.stringify(entry);
			}
		} catch {
			// leave unparsable lines to pi
		}
		return line;
	});
	if (changed) adjustments.push("self-parent");
	return lines.join("\n");
}

/** pi's context, cut at the latest reset_boundary on the path unless a compaction comes after it. */
function ompContext(sessions, manager, adjustments) {
	const path = manager.getBranch();
	let boundary = -1;
	let compaction = -1;
	path.forEach((entry, i) => {
		if (entry.type === "reset_boundary") boundary = i;
		if (entry.type === "compaction") compaction = i;
	});
	if (boundary < 0) return manager.buildSessionContext();
	adjustments.push("reset-boundary");
	if (boundary < compaction) return manager.buildSessionContext();
	const after = path.slice(boundary + 1).map((entry) => ({ ...entry }));
	if (after.length === 0) return { messages: [], thinkingLevel: "off", model: null };
	after[0].parentId = null;
	const byId = new Map(after.map((entry) => [entry.id, entry]));
	return sessions.buildSessionContext(after, after[after.length - 1].id, byId);
}

function treeRows(TreeSelectorComponent, manager, filter, width, hideOmp, search = "") {
	const selector = new TreeSelectorComponent(
		manager.getTree(),
		manager.getLeafId(),
		100000,
		() => {},
		() => {},
		undefined,
		undefined,
		filter,
	);
	const list = selector.getTreeList();
	if (search) {
		// what typing does: the query, then pi's own filter pass
		list.searchQuery = search;
		list.applyFilter();
	}
	if (hideOmp && (filter === "default" || filter === "no-tools")) {
		// pi's own filter, plus oh-my-pi's bookkeeping types counted as settings entries; pi's own
		// layout pass then re-attaches what was under them.
		const selectedId = list.filteredNodes[list.selectedIndex]?.node.entry.id;
		list.filteredNodes = list.filteredNodes.filter((flat) => !OMP_BOOKKEEPING.has(flat.node.entry.type));
		list.recalculateVisualStructure();
		const index = list.filteredNodes.findIndex((flat) => flat.node.entry.id === selectedId);
		list.selectedIndex = index >= 0 ? index : list.findNearestVisibleIndex(selectedId);
	}
	const lines = list.render(width).map((line) => line.replace(ANSI, ""));
	const empty = list.filteredNodes.length === 0;
	return {
		rows: empty ? [] : lines.slice(0, -1),
		ids: list.filteredNodes.map((flat) => flat.node.entry.id),
		counter: lines[lines.length - 1],
		empty: empty ? lines[0] : null,
	};
}

async function main() {
	const { packageDir, sessionFiles, widths, searches } = parseArgs(process.argv.slice(2));
	const sessions = await load(packageDir, "core/session-manager.js");
	const { convertToLlm } = await load(packageDir, "core/messages.js");
	const { initTheme } = await load(packageDir, "modes/interactive/theme/theme.js");
	const { TreeSelectorComponent } = await load(packageDir, "modes/interactive/components/tree-selector.js");
	initTheme("dark", false);
	const modules = { sessions, convertToLlm, TreeSelectorComponent };
	for (const sessionFile of sessionFiles) {
		let result;
		try {
			result = view(modules, sessionFile, widths, searches);
		} catch (error) {
			result = { error: String(error?.stack ?? error) };
		}
		process.stdout.write(`${JSON.stringify(result)}\n`);
	}
}

/** What pi makes of one session file (see the top of this file). */
function view({ sessions, convertToLlm, TreeSelectorComponent }, sessionFile, widths, searches) {
	const work = mkdtempSync(join(tmpdir(), "pi-reference-"));
	try {
		const adjustments = [];
		const original = readFileSync(sessionFile, "utf8");
		// What pi does with the file untouched: how many entries its loader keeps.
		const rawCopy = join(work, "raw.jsonl");
		copyFileSync(sessionFile, rawCopy);
		const rawLoaded = sessions.loadEntriesFromFile(rawCopy).length;

		const text = unloopSelfParents(stripTitleSlot(original, adjustments), adjustments);
		const copy = join(work, "session.jsonl");
		writeFileSync(copy, text);
		const manager = sessions.SessionManager.open(copy, work);
		const entries = manager.getEntries();
		const hideOmp = entries.some((entry) => OMP_BOOKKEEPING.has(entry.type));
		const context = ompContext(sessions, manager, adjustments);
		const tree = {};
		for (const width of widths) {
			tree[width] = {};
			for (const filter of FILTERS) {
				tree[width][filter] = treeRows(TreeSelectorComponent, manager, filter, width, hideOmp);
			}
		}
		const search = {};
		for (const words of searches) {
			search[words] = {};
			for (const filter of ["default", "all"]) {
				search[words][filter] = treeRows(TreeSelectorComponent, manager, filter, widths[0], hideOmp, words);
			}
		}
		const result = {
			adjustments: [...new Set(adjustments)],
			rawLoadedEntries: rawLoaded,
			header: manager.getHeader(),
			entries: entries.map((entry) => ({ type: entry.type, id: entry.id, parentId: entry.parentId })),
			leafId: manager.getLeafId(),
			context: {
				thinkingLevel: context.thinkingLevel ?? null,
				model: context.model ?? null,
				messages: convertToLlm(context.messages),
			},
			tree,
			search,
		};
		return result;
	} finally {
		rmSync(work, { recursive: true, force: true });
	}
}

await main();
