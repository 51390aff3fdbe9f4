// The ONNX workload: a generated or user-supplied model run by the child script in a fresh Node process.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../../errors.js';
import { protocolEnv } from '../protocol/env.js';
import { definedParams, type MeasureSteps, type TrialCommand, type Workload } from '../workload.js';
import { ensureModel } from './models/index.js';
import { ONNX_WORKLOAD_ENV, type OnnxChildSpec, type OnnxWorkloadOptions } from './spec.js';
import type { Config } from '../../domain/index.js';

const CHILD = fileURLToPath(new URL('./child.js', import.meta.url));

export class OnnxWorkload implements Workload {
  readonly kind = 'onnx';
  readonly description: string;
  readonly fixedParams: Config;
  private readonly modelPath: string;
  private readonly inputs: OnnxChildSpec['inputs'];
  private readonly pipeline: OnnxWorkloadOptions['pipeline'];

  constructor(
    spec: OnnxWorkloadOptions,
    private readonly seed: number,
  ) {
    const model = spec.model;
    if ('generate' in model) {
      const sizes = Object.entries(model).filter(
        (e): e is [string, number] => e[0] !== 'generate' && e[0] !== 'seed' && typeof e[1] === 'number',
      );
      const file = ensureModel({ kind: model.generate, seed: model.seed ?? 1, params: Object.fromEntries(sizes) });
      this.modelPath = file.path;
      this.inputs = file.inputs;
      this.description = `onnx ${file.description}`;
    } else {
      if (!existsSync(model.path))
        throw new ConfigError(
          `workload.model.path: no such file ${model.path}; ` +
            'give the path of an .onnx file relative to the experiment file',
        );
      const symbolic = Object.values(model.inputs).some((dims) => dims.some((d) => typeof d === 'string'));
      if (!symbolic)
        throw new ConfigError(
          'workload.model.inputs: no input has a symbolic dimension; ' +
            'name the batch dimension, for example [batch, 3, 224, 224]',
        );
      this.modelPath = model.path;
      this.inputs = model.inputs;
      this.description = `onnx ${model.path}`;
    }
    this.fixedParams = definedParams(spec.params);
    this.pipeline = spec.pipeline;
    if (this.pipeline && Object.keys(this.inputs).length !== 1) {
      throw new ConfigError(
        `workload.pipeline: the pipeline feeds one input, but the model has ${Object.keys(this.inputs).length}; ` +
          'use a single-input model',
      );
    }
  }

  command(config: Config, measure: MeasureSteps): TrialCommand {
    const child: OnnxChildSpec = {
      modelPath: this.modelPath,
      inputs: this.inputs,
      warmupSteps: measure.warmupSteps,
      steps: measure.steps,
      seed: this.seed,
      ...(this.pipeline
        ? {
            pipeline: {
              cost: this.pipeline.cost,
              epochs: Math.max(this.pipeline.epochs, measure.epochs ?? 1),
              ...(this.pipeline.fault ? { fault: this.pipeline.fault } : {}),
            },
          }
        : {}),
    };
    return {
      argv: [process.execPath, CHILD],
      env: { ...protocolEnv(config, measure), [ONNX_WORKLOAD_ENV]: JSON.stringify(child) },
      eventsRequired: true,
    };
  }
}
