// Finds a key that appears twice in one object of JSON text, which JSON.parse would silently resolve to the last.

/** The first repeated key in valid JSON `text` and the line it is repeated on; undefined when there is none. */
export function duplicateJsonKey(text: string): { key: string; line: number } | undefined {
  // One entry per open container: the keys seen so far for an object, null for an array.
  const stack: (Set<string> | null)[] = [];
  let expectKey = false;
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') line++;
    else if (c === '{') {
      stack.push(new Set());
      expectKey = true;
    } else if (c === '[') {
      stack.push(null);
      expectKey = false;
    } else if (c === '}' || c === ']') {
      stack.pop();
      expectKey = false;
    } else if (c === ',') expectKey = stack.at(-1) instanceof Set;
    else if (c === ':') expectKey = false;
    else if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      const keys = stack.at(-1);
      if (expectKey && keys) {
        const key = JSON.parse(text.slice(start, i + 1)) as string;
        if (keys.has(key)) return { key, line };
        keys.add(key);
      }
    }
  }
  return undefined;
}
