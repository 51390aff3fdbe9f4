// Known out-of-memory messages, one versioned table. Structured signals are checked before these.

/** Bump when the table changes; trial records store it so a reclassification can be explained. */
export const PATTERNS_VERSION = 2;

export interface OomPattern {
  source: string;
  pattern: RegExp;
}

export const OOM_PATTERNS: readonly OomPattern[] = [
  { source: 'onnxruntime', pattern: /Failed to allocate memory for requested buffer/i },
  { source: 'onnxruntime', pattern: /BFCArena.*(?:Failed|unable) to allocate/i },
  { source: 'v8', pattern: /Array buffer allocation failed/i },
  {
    source: 'v8',
    pattern:
      /JavaScript heap out of memory|Fatal process out of memory|Fatal process OOM|Allocation failed - process out of memory/i,
  },
  { source: 'pytorch', pattern: /CUDA out of memory/i },
  { source: 'pytorch', pattern: /OutOfMemoryError/ },
  { source: 'pytorch', pattern: /DefaultCPUAllocator: can't allocate memory/i },
  { source: 'c++', pattern: /std::bad_alloc/ },
  { source: 'python', pattern: /^MemoryError\b/m },
  { source: 'libc', pattern: /Cannot allocate memory/i },
  // torchrun's report when the first rank to fail was killed by SIGKILL, which tunebench did not send
  // (it stops a multi-rank trial itself only at its timeout, a done or an oom event): the OOM killer.
  {
    source: 'torchrun',
    pattern: /Root Cause \(first observed failure\):\n\[\d+\]:\n(?: {2}.*\n)*? {2}exitcode\s*: -9\b/,
  },
];

/** Returns the first matching pattern's source, or undefined. */
export function matchOom(text: string): OomPattern | undefined {
  return OOM_PATTERNS.find((p) => p.pattern.test(text));
}

export function isOomMessage(text: string): boolean {
  return matchOom(text) !== undefined;
}
