// Quoting for POSIX shells (what batch scripts and printed command lines need), and splitting a
// command line into arguments without one.
import { homedir } from 'node:os';

/** `value` in single quotes, safe as one word for sh whatever it holds. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Arguments as one shell line: plain words stay bare, anything else is single-quoted. */
export function shellLine(args: readonly string[]): string {
  return args.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : shellQuote(a))).join(' ');
}

/** Control characters (newline, tab, ESC, ...): a printed line must not break or carry them raw. */
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * One word for a command line that is printed for a person to paste into bash or zsh: plain words
 * stay bare, others are single-quoted, and a word with control characters (a newline in a path) is
 * written as $'...' with escapes, so the printed line stays one line and pastes back to the same word.
 */
export function shellWord(value: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  if (!CONTROL.test(value)) return shellQuote(value);
  const escaped = [...value]
    .map((c) => {
      if (c === '\\' || c === "'") return `\\${c}`;
      if (c === '\n') return '\\n';
      if (c === '\t') return '\\t';
      return CONTROL.test(c) ? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}` : c;
    })
    .join('');
  return `$'${escaped}'`;
}

/** A command printed for a person to paste into a shell (resume, confirm and accept hints). */
export function printedCommand(args: readonly string[]): string {
  return args.map(shellWord).join(' ');
}

/** Unquoted text that means something to a shell: pipes, lists, redirections, substitutions, variables, globs. */
const NEEDS_SHELL = /[|&;<>()`*?[]|\$[A-Za-z_{(0-9@*#?$!-]|^#/;

export class CommandLineError extends Error {}

/**
 * Splits a command line into arguments the way a POSIX shell would for plain words, without running
 * a shell: whitespace separates, 'single' and "double" quotes group (backslash escapes \, ", $ and `
 * inside double quotes), and a backslash outside quotes takes the next character as it is. Operators
 * (|, &&, ;, >, <, $(...), backticks, unquoted globs) and $VARIABLES are refused with a hint to opt
 * in to a shell, since splitting would pass them on as literal arguments.
 */
export function splitCommand(line: string): string[] {
  const args: string[] = [];
  let current = '';
  let inWord = false;
  let plain = '';
  const finish = () => {
    if (!inWord) return;
    if (NEEDS_SHELL.test(plain))
      throw new CommandLineError(
        `${JSON.stringify(line)}: ${JSON.stringify(current)} needs a shell (a pipe, a redirection, a variable, ` +
          'a glob or a command list); add --shell sh to run the command through sh -c, or quote it to pass it as text',
      );
    if (args.length === 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(plain))
      throw new CommandLineError(
        `${JSON.stringify(line)}: ${JSON.stringify(current)} sets an environment variable, which needs a shell; ` +
          `add --shell sh, or start the command with env (env ${current} ...)`,
      );
    // A leading ~ is the home directory, as in a shell.
    if (plain.startsWith('~/') || plain === '~') current = homedir() + current.slice(1);
    args.push(current);
    current = '';
    plain = '';
    inWord = false;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === ' ' || c === '\t' || c === '\n') {
      finish();
      continue;
    }
    inWord = true;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw unbalanced(line, "'");
      current += line.slice(i + 1, end);
      plain += 'q';
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && j + 1 < line.length && '\\"$`\n'.includes(line[j + 1]!)) j += 1;
        current += line[j];
      }
      if (j >= line.length) throw unbalanced(line, '"');
      plain += 'q';
      i = j;
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new CommandLineError(`${JSON.stringify(line)}: ends with a lone backslash`);
      current += line[i + 1];
      plain += 'q';
      i += 1;
    } else {
      current += c;
      plain += c;
    }
  }
  finish();
  if (args.length === 0) throw new CommandLineError('the command is empty: give a program and its arguments');
  return args;
}

function unbalanced(line: string, quote: string): CommandLineError {
  return new CommandLineError(`${JSON.stringify(line)}: the ${quote} quote is never closed`);
}
