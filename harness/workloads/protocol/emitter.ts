// Writes protocol events from inside a workload process (used by the ONNX child).
import { appendFileSync } from 'node:fs';
import { ENV, type WorkloadEvent } from './events.js';

/** Appends events synchronously, so a crash right after an event never loses it. */
export class EventEmitterFile {
  constructor(private readonly path: string | undefined = process.env[ENV.events]) {}

  emit(event: WorkloadEvent): void {
    if (!this.path) return;
    appendFileSync(this.path, `${JSON.stringify(event)}\n`);
  }
}
