// A tiny arithmetic language for constraints: numbers, names, + - * / and parentheses. No eval.

export type Expr =
  | { kind: 'num'; value: number }
  | { kind: 'name'; name: string }
  | { kind: 'op'; op: '+' | '-' | '*' | '/'; left: Expr; right: Expr }
  | { kind: 'neg'; operand: Expr };

const TOKEN = /\s*(?:(\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|([-+*/()]))/y;

/** Parses `text`; throws an Error that says where it stopped and why. */
export function parseExpr(text: string): Expr {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const start = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (!m) {
      if (/^\s*$/.test(text.slice(start))) break;
      const at = start + (text.slice(start).length - text.slice(start).trimStart().length);
      throw new Error(`unexpected "${text[at]}" at position ${at + 1} of "${text}"`);
    }
    tokens.push(m[1] ?? m[2] ?? m[3]!);
  }
  let i = 0;
  const peek = (): string | undefined => tokens[i];
  const expect = (t: string): void => {
    if (tokens[i] !== t)
      throw new Error(`expected "${t}" in "${text}", found ${tokens[i] ? `"${tokens[i]}"` : 'the end'}`);
    i++;
  };
  const primary = (): Expr => {
    const t = tokens[i++];
    if (t === undefined) throw new Error(`"${text}" ends too early`);
    if (t === '(') {
      const e = sum();
      expect(')');
      return e;
    }
    if (t === '-') return { kind: 'neg', operand: primary() };
    if (/^\d/.test(t)) return { kind: 'num', value: Number(t) };
    if (/^[A-Za-z_]/.test(t)) return { kind: 'name', name: t };
    throw new Error(`unexpected "${t}" in "${text}"`);
  };
  const product = (): Expr => {
    let left = primary();
    while (peek() === '*' || peek() === '/')
      left = { kind: 'op', op: tokens[i++] as '*' | '/', left, right: primary() };
    return left;
  };
  const sum = (): Expr => {
    let left = product();
    while (peek() === '+' || peek() === '-')
      left = { kind: 'op', op: tokens[i++] as '+' | '-', left, right: product() };
    return left;
  };
  const e = sum();
  if (i < tokens.length) throw new Error(`unexpected "${tokens[i]}" in "${text}"`);
  return e;
}

export function names(e: Expr): string[] {
  switch (e.kind) {
    case 'num':
      return [];
    case 'name':
      return [e.name];
    case 'neg':
      return names(e.operand);
    case 'op':
      return [...new Set([...names(e.left), ...names(e.right)])];
  }
}

/** Evaluates with the given bindings; booleans count as 0 and 1. */
export function evaluate(e: Expr, env: Readonly<Record<string, unknown>>): number {
  switch (e.kind) {
    case 'num':
      return e.value;
    case 'name': {
      const v = env[e.name];
      if (typeof v === 'number') return v;
      if (typeof v === 'boolean') return v ? 1 : 0;
      throw new Error(`"${e.name}" has no numeric value here`);
    }
    case 'neg':
      return -evaluate(e.operand, env);
    case 'op': {
      const a = evaluate(e.left, env);
      const b = evaluate(e.right, env);
      return e.op === '+' ? a + b : e.op === '-' ? a - b : e.op === '*' ? a * b : a / b;
    }
  }
}
