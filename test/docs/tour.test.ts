// The README's set-up and five-minute tour run as written, in order, on a copy of the
// demo (its manifest, data file and images) in a temp folder, with the built CLI: every
// command line of their code blocks, with the exit code its comment names (0 when none);
// the edits the tour asks of the reader (a prompt changed, `review: true` added) are made
// by the test where the text asks for them, and the files it tells the reader to open
// exist. `npx omnibatch` is the built CLI (dist/cli/bin.js), which is what `npx` runs in
// a clone after `npm ci`; `npm ci` and `npm test` themselves are what `.ci/run` runs.
// The review page (a server) is started, its address awaited, and stopped with Ctrl-C.

import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readLockFile } from "../../src/state/readLockFile.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const bin = join(root, "dist/cli/bin.js");
const readme = readFileSync(join(root, "README.md"), "utf8");

/** The text of a `## ` section, up to the next one. */
const section = (heading: string): string => {
  const at = readme.indexOf(`\n## ${heading}\n`);
  assert.ok(at >= 0, `README has a section "## ${heading}"`);
  const end = readme.indexOf("\n## ", at + 4);
  return readme.slice(at, end < 0 ? undefined : end);
};

interface Block {
  readonly at: number;
  readonly lines: readonly string[];
}

/** The ```sh blocks of a text, with where each starts. */
const shBlocks = (text: string): Block[] =>
  [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => ({ at: m.index!, lines: m[1]!.split("\n").filter((l) => l.trim() !== "") }));

/** Words of a command line as a POSIX shell splits them (plain words and '…' / "…" quotes), and the comment after it. */
const parse = (line: string): { words: string[]; comment: string } => {
  const words: string[] = [];
  let i = 0;
  let comment = "";
  while (i < line.length) {
    while (line[i] === " ") i++;
    if (i >= line.length) break;
    if (line[i] === "#") {
      comment = line.slice(i + 1).trim();
      break;
    }
    let word = "";
    while (i < line.length && line[i] !== " ") {
      const q = line[i];
      if (q === "'" || q === '"') {
        const close = line.indexOf(q, i + 1);
        assert.ok(close > i, `a closed quote in: ${line}`);
        word += line.slice(i + 1, close);
        i = close + 1;
      } else word += line[i++];
    }
    words.push(word);
  }
  return { words, comment };
};

const expectedExit = (comment: string): number => Number(/\bexit (\d+)/.exec(comment)?.[1] ?? 0);

const run = (dir: string, args: readonly string[]) =>
  execa("node", [bin, ...args], { cwd: dir, reject: false, all: true, extendEnv: false, env: { PATH: process.env["PATH"] ?? "" }, timeout: 120_000 });

/** `npx omnibatch …` as the built CLI; the review page is started, awaited and stopped. */
const runLine = async (dir: string, line: string): Promise<string> => {
  const { words, comment } = parse(line);
  assert.equal(words.slice(0, 2), ["npx", "omnibatch"], `a command of the tour: ${line}`);
  const args = words.slice(2);
  if (args[0] === "review" && !args.some((a) => a === "--approve" || a === "--reject" || a === "--list")) {
    const child = execa("node", [bin, ...args], { cwd: dir, reject: false, all: true, extendEnv: false, env: { PATH: process.env["PATH"] ?? "" }, timeout: 60_000 });
    let out = "";
    await new Promise<void>((resolve, reject) => {
      child.all!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (/http:\/\/127\.0\.0\.1:\d+\/\S+/.test(out)) resolve();
      });
      child.once("exit", () => reject(new Error(`the review page ended before printing its address: ${out}`)));
    });
    child.kill("SIGINT");
    const ended = await child;
    assert.ok(ended.exitCode === 0 || ended.exitCode === 130 || ended.signal === "SIGINT", `${line}: stopped by Ctrl-C (${ended.exitCode} ${ended.signal})`);
    return out;
  }
  const r = await run(dir, args);
  assert.is(r.exitCode, expectedExit(comment), `${line}\n${r.all}`);
  return r.all ?? "";
};

test("README's set-up and five-minute tour run as written on a copy of the demo", async () => {
  const dir = mkdtempSync(join(tmpdir(), "readme-tour-"));
  try {
    cpSync(join(root, "manifests/demo.yaml"), join(dir, "manifests/demo.yaml"));
    for (const part of ["manifests/data", "manifests/assets"]) cpSync(join(root, part), join(dir, part), { recursive: true });
    const manifest = join(dir, "manifests/demo.yaml");

    // Set-up: one command per block; `npm ci` and `npm test` are .ci/run's.
    const setup = shBlocks(section("Set-up"));
    assert.is(setup.length, 2, "two set-up blocks");
    assert.equal(setup.map((b) => b.lines), [["npm ci && npx omnibatch run manifests/demo.yaml --emulate"], ["npm test"]]);
    for (const part of setup[0]!.lines[0]!.split("&&").map((p) => p.trim())) if (part !== "npm ci") await runLine(dir, part);
    const lockfile = join(dir, "manifests/demo.emulate.lock.json");
    const clipsOf = async () => Object.entries((await readLockFile(lockfile))!.tasks).filter(([, t]) => t.job === "clips");
    const demoClips = new Set((await clipsOf()).map(([id]) => id));
    assert.is(demoClips.size, 5, "the set-up made the demo's five clips");

    // The tour: its edits and files where the text names them, its blocks in order.
    const tour = section("A five-minute tour");
    const flat = (s: string) => s.replace(/\s+/g, " ");
    const events: { at: number; run: () => Promise<void> }[] = [];
    const outputs: string[] = [];
    for (const b of shBlocks(tour)) {
      events.push({
        at: b.at,
        run: async () => {
          for (const line of b.lines) outputs.push(await runLine(dir, line));
        },
      });
    }
    const prompt = /change the clips' prompt from `([^`]+)` to `([^`]+)`/.exec(flat(tour));
    assert.ok(prompt, "the tour asks for a prompt change");
    events.push({
      at: tour.search(/change the clips'\s+prompt/),
      run: async () => {
        const text = readFileSync(manifest, "utf8");
        assert.match(text, prompt[1]!);
        writeFileSync(manifest, text.replace(prompt[1]!, prompt[2]!));
      },
    });
    const review = /Add\s+`review: true` under `keyframes:`/.exec(tour);
    assert.ok(review, "the tour asks for review: true");
    events.push({
      at: review.index,
      run: async () => {
        const text = readFileSync(manifest, "utf8");
        assert.match(text, /\n {2}keyframes:\n/);
        writeFileSync(manifest, text.replace(/\n {2}keyframes:\n/, "\n  keyframes:\n    review: true\n"));
      },
    });
    // Files the reader is told to open or read.
    for (const m of tour.matchAll(/`(outputs\/[^`*]+\.(?:html|md|csv|json))`/g)) {
      const at = m.index!;
      events.push({ at, run: async () => assert.ok(existsSync(join(dir, m[1]!)), `${m[1]} exists when the tour names it`) });
    }
    events.sort((a, b) => a.at - b.at);
    for (const e of events) await e.run();

    // The plan showed the changed clips; the last run made the two clips of the approved stills.
    assert.ok(outputs.some((o) => /^\s*clips\s+0\s+5\s/m.test(o)), "the plan shows the five clips changed (~)");
    const lock = (await readLockFile(lockfile))!;
    const made = (await clipsOf()).filter(([id]) => !demoClips.has(id)).map(([, t]) => t);
    assert.is(made.length, 2, "two clips made after the review");
    for (const clip of made) {
      assert.is(clip.state, "downloaded");
      assert.is((lock.tasks[clip.upstream!.task]!.vars["product"] as { sku: string }).sku, "A-1", "made from an approved still");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
