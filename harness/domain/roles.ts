// A trial's role, typed: what the trial was for in its stage (its kind) and where it sits (a round, a
// claim's pair, a bisect step). Code decides on the fields; the words ("candidate pair 3") are made
// only where a role is printed (roleText). Records of formats 1 and 2 kept the words: they are read
// back through roleOfText, in the journal's schema transform only.
import { z } from 'zod';

/** Every kind of role: the max-batch search's runs, a sweep's and a compare's trials, warm-ups, a claim's sides. */
export const ROLE_KINDS = [
  'probe',
  'confirm',
  'throughput',
  'recommended',
  'latency',
  'recipe',
  'repeat',
  'bracket',
  'lower',
  'final-confirm',
  'grid',
  'race',
  'compare',
  'warm-up',
  'baseline',
  'candidate',
] as const;
export type RoleKind = (typeof ROLE_KINDS)[number];

export const roleSchema = z.object({
  kind: z.enum(ROLE_KINDS),
  /** A compare round, or a warm-up's number (1-based). */
  round: z.number().int().positive().optional(),
  /** A claim's pair (1-based). */
  pair: z.number().int().positive().optional(),
  /** A trial of a bisect step: which measurement of the step, and which commit it ran. */
  bisect: z
    .object({
      purpose: z.enum(['check', 'step']),
      attempt: z.number().int().positive(),
      commit: z.enum(['good', 'tested']),
    })
    .optional(),
});
export type Role = z.infer<typeof roleSchema>;

/** A role in words: "probe", "compare round 2", "candidate pair 3", "check-1 good compare round 2". */
export function roleText(r: Role): string {
  return [
    ...(r.bisect ? [`${r.bisect.purpose}-${r.bisect.attempt}`, r.bisect.commit] : []),
    r.kind,
    ...(r.round !== undefined ? ['round', String(r.round)] : []),
    ...(r.pair !== undefined ? ['pair', String(r.pair)] : []),
  ].join(' ');
}

/** A role's fields in a fixed order, for keys and comparisons (never its words). */
export const roleKey = (r: Role): readonly unknown[] => [
  r.kind,
  r.round ?? null,
  r.pair ?? null,
  r.bisect ? [r.bisect.purpose, r.bisect.attempt, r.bisect.commit] : null,
];

/** Whether two roles are the same (a resumed trial against the one the experiment asks for), field by field. */
export const sameRole = (a: Role, b: Role): boolean => JSON.stringify(roleKey(a)) === JSON.stringify(roleKey(b));

const ROLE_WORDS = /^(?:(check|step)-(\d+) (good|tested) )?([a-z-]+)(?: (?:round )?(\d+)| pair (\d+))?$/;

/**
 * The role that the words of a record of format 1 or 2 name ("warm-up 2" and "warm-up round 2" are the
 * same warm-up); undefined for words that no tunebench wrote.
 */
export function roleOfText(text: string): Role | undefined {
  const m = ROLE_WORDS.exec(text);
  const kind = m?.[4];
  if (!m || !(ROLE_KINDS as readonly string[]).includes(kind!)) return undefined;
  return {
    kind: kind as RoleKind,
    ...(m[5] !== undefined ? { round: Number(m[5]) } : {}),
    ...(m[6] !== undefined ? { pair: Number(m[6]) } : {}),
    ...(m[1] !== undefined
      ? {
          bisect: {
            purpose: m[1] as 'check' | 'step',
            attempt: Number(m[2]),
            commit: m[3] as 'good' | 'tested',
          },
        }
      : {}),
  };
}
