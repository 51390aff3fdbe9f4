// A device class: the GPU's name, or "CPU: <model>" on a machine without one. Built by deviceName()
// and read by isCpuDevice() only, so no code matches the wording.

const CPU_PREFIX = 'CPU: ';

/** The device class of a machine: its GPU's name, else its CPU model. */
export function deviceName(env: { gpu?: { name: string } | null; cpu: { model: string } }): string {
  return env.gpu ? env.gpu.name : `${CPU_PREFIX}${env.cpu.model}`;
}

/** Whether a device class (from deviceName) is a machine without a GPU. */
export function isCpuDevice(device: string): boolean {
  return device.startsWith(CPU_PREFIX);
}
