// The ONNX workload: a generated or user-supplied model run by the child script in a fresh Node process.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../../errors.js';
import type { OnnxWorkloadSpec } from '../../experiment/schema.js';
import { protocolEnv } from '../protocol/env.js';
import type { MeasureSteps, TrialCommand, Workload } from '../workload.js';
import { ensureModel, type ModelKind } from './models/index.js';
import { ONNX_WORKLOAD_ENV, type OnnxChildSpec } from './spec.js';
import type { Config } from '../../domain/index.js';

const CHILD = fileURLToPath(new URL('./child.js', import.meta.url));

export class OnnxWorkload implements Workload {
  readonly kind = 'onnx';
  readonly description: string;
  readonly fixedParams: Config;
  private readonly modelPath: string;
  private readonly inputs: OnnxChildSpec['inputs'];
  private readonly pipeline: OnnxWorkloadSpec['pipeline'];

  constructor(spec: OnnxWorkloadSpec, private readonly seed: number) {
    const model = spec.model;
    if ('generate' in model) {
      const { generate, seed: modelSeed, ...params } = model;
      const file = ensureModel({ kind: generate as ModelKind, seed: modelSeed ?? 1, params: params as Record<string, number> });
      this.modelPath = file.path;
      this.inputs = file.inputs;
      this.description = `onnx ${file.description}`;
    } else {
      if (!existsSync(model.path)) throw new ConfigError(`workload.model.path: no such file ${model.path}; give the path of an .onnx file relative to the experiment file`);
      const symbolic = Object.values(model.inputs).some((dims) => dims.some((d) => typeof d === 'string'));
      if (!symbolic) throw new ConfigError('workload.model.inputs: no input has a symbolic dimension; name the batch dimension, for example [batch, 3, 224, 224]');
      this.modelPath = model.path;
      this.inputs = model.inputs;
      this.description = `onnx ${model.path}`;
    }
    this.fixedParams = { ...(spec.params ?? {}) } as Config;
    this.pipeline = spec.pipeline;
    if (this.pipeline && Object.keys(this.inputs).length !== 1) {
      throw new ConfigError(`workload.pipeline: the pipeline feeds one input, but the model has ${Object.keys(this.inputs).length}; use a single-input model`);
    }
  }

  command(config: Config, measure: MeasureSteps): TrialCommand {
    const child: OnnxChildSpec = {
      modelPath: this.modelPath,
      inputs: this.inputs,
      warmupSteps: measure.warmupSteps,
      steps: measure.steps,
      seed: this.seed,
      ...(this.pipeline ? { pipeline: { cost: this.pipeline.cost, epochs: Math.max(this.pipeline.epochs, measure.epochs ?? 1), ...(this.pipeline.fault ? { fault: this.pipeline.fault } : {}) } } : {}),
    };
    return {
      argv: [process.execPath, CHILD],
      env: { ...protocolEnv(config, measure), [ONNX_WORKLOAD_ENV]: JSON.stringify(child) },
      eventsRequired: true,
    };
  }
}
