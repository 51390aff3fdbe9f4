// Every command's --help shows how it is used: each command the program registers (found in the
// "Commands:" sections of the help itself, so a new command is checked too, and the subcommands of
// groups such as `baseline`) prints "Examples:" with lines that run it on the shipped files.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { CLI, ROOT } from '../../support/paths.js';

const run = promisify(execFile);

async function help(path: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [CLI, ...path, '--help'], { cwd: ROOT });
  return stdout;
}

/** The lines of a help section ("Commands:", "Examples:"), up to the blank line that ends it. */
function section(text: string, title: string): string[] {
  const lines = text.split('\n');
  const start = lines.indexOf(title);
  if (start < 0) return [];
  const end = lines.findIndex((line, i) => i > start && line.trim() === '');
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** The commands a help text lists: names at two spaces (wrapped descriptions sit deeper), without `help`. */
const commandsIn = (text: string): string[] =>
  section(text, 'Commands:')
    .map((line) => /^ {2}([a-z][\w-]*)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== 'help');

/** Every registered command as its words (`['baseline', 'set']`), with its --help text. */
async function allCommands(path: string[] = [], text?: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const names = commandsIn(text ?? (await help(path)));
  const texts = await Promise.all(names.map((name) => help([...path, name])));
  for (const [i, name] of names.entries()) {
    const words = [...path, name];
    found.set(words.join(' '), texts[i]!);
    for (const [sub, subText] of await allCommands(words, texts[i])) found.set(sub, subText);
  }
  return found;
}

const commands = await allCommands();

describe('--help of every command', () => {
  it('finds the commands the program registers, subcommands included', () => {
    for (const name of ['run', 'report', 'compare', 'claims', 'history', 'validate', 'schema', 'collect'])
      assert.ok(commands.has(name), `tunebench --help lists ${name}: ${[...commands.keys()].join(', ')}`);
    for (const name of ['baseline set', 'baseline accept', 'baseline show', 'baseline clear'])
      assert.ok(commands.has(name), `tunebench baseline --help lists ${name.split(' ')[1]}`);
  });

  for (const [name, text] of commands) {
    it(`tunebench ${name} --help has examples of tunebench ${name}`, () => {
      const lines = section(text, 'Examples:');
      assert.ok(lines.length > 0, `no "Examples:" block in tunebench ${name} --help:\n${text}`);
      const own = `  tunebench ${name}`;
      assert.ok(
        lines.some((line) => line === own || line.startsWith(`${own} `)),
        `no example starts with "${own}":\n${lines.join('\n')}`,
      );
      for (const line of lines) {
        assert.match(line, /^ {2}tunebench /, `an example that is not a tunebench command line: "${line}"`);
        for (const file of line.split(/\s+/).filter((word) => /^experiments\/\S+$/.test(word)))
          assert.ok(existsSync(join(ROOT, file)), `"${line.trim()}" names ${file}, which is not in the repository`);
      }
    });
  }
});
