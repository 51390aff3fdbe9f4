// A stage's typed notes as the report words them, for tests that check a sentence (report/notes.ts).
import { noteText } from '../../harness/report/notes.js';
import type { StageNote } from '../../harness/domain/index.js';
import type { Frozen } from '../../harness/util/frozen.js';

/** Each note's sentence, one a line. */
export const notesText = (notes: readonly Frozen<StageNote>[]): string => notes.map(noteText).join('\n');
