// A trial's role: its kind first, then where it sits ("warm-up 2", "candidate pair 3", "compare round 1").
// Roles are built by `role()` and read by `roleKind()` only, so no code matches a role's wording.

/** Kinds of a trial's role that code decides on; other kinds (probe, confirm, ...) are plain words. */
export type RoleKind = 'warm-up' | 'baseline' | 'candidate' | (string & {});

/** A role: the kind, then the words and numbers that place the trial ("pair", 3). */
export function role(kind: RoleKind, ...where: (string | number)[]): string {
  return [kind, ...where].join(' ');
}

/** The kind of a role (its first word). */
export function roleKind(r: string): RoleKind {
  const space = r.indexOf(' ');
  return space < 0 ? r : r.slice(0, space);
}
