import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { App, Validations } from 'aws-cdk-lib';
import type { AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ensureWebBuild } from '#local/web.ts';
import { BurnrateStack } from './burnrate-stack.ts';
import { DeploySettingsError } from './settings.ts';
import type { BurnrateStackProps } from './burnrate-stack.ts';

export const DEFAULT_STACK_NAME = 'Burnrate';

export interface BuildAppProps {
  /** Passed to `new App()`: tests give `context` (e.g. `'aws:cdk:bundling-stacks': []`) and `outdir`. */
  app?: AppProps;
  /** Overrides for the stack; the stack name comes from context `stackName` (default `Burnrate`). */
  stack?: BurnrateStackProps;
  /**
   * Run cdk-nag's AwsSolutions pack as a policy-validation plugin: synth fails on any finding that is not
   * acknowledged in code (`Validations.of(construct).acknowledge({id, reason})`). On for `cdk synth`/`deploy`.
   * @default false
   */
  nag?: boolean;
}

/** The CDK app: one BurnrateStack. Used by `cdk` (below) and by the infra tests. */
export function buildApp(props: BuildAppProps = {}): { app: App; stack: BurnrateStack } {
  const app = new App(props.app);
  if (props.nag) Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  const stackName = String(app.node.tryGetContext('stackName') ?? DEFAULT_STACK_NAME);
  const stack = new BurnrateStack(app, stackName, {
    stackName,
    description: 'Burnrate: spend tracking API (HTTP API, Lambda, DynamoDB, Cognito)',
    ...props.stack,
  });
  return { app, stack };
}

function isMain(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

// Run by the CDK CLI (`npx tsx infra/app.ts`): the App synthesizes itself into CDK_OUTDIR on exit, checked by cdk-nag.
// The dashboard is built first when web/dist is missing or older than its sources (as `npm start` does), so
// `cdk deploy` always uploads the app of this checkout.
if (isMain()) {
  await ensureWebBuild((line) => console.error(line));
  try {
    buildApp({ nag: true }).app.synth();
  } catch (error) {
    // A refused setting is the deployer's to fix: the message alone, no stack trace.
    if (!(error instanceof DeploySettingsError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}
