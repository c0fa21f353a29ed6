import { defineConfig } from 'vitest/config';

const env = {
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  CURSOR_SECRET: 'unit-test-cursor-secret',
};

/** Three layers: pure units, integration against the real local stack, CDK template assertions; and the reporter package's own tests. */
export default defineConfig({
  test: {
    env,
    // Two files at a time even on a 2-core machine (vitest's default there is one): much of the suite waits on the
    // local stack's processes (DynamoDB Local, Chromium, the stand-ins), so two files overlap those waits.
    maxWorkers: 2,
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], env } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 120_000,
          env,
        },
      },
      { test: { name: 'reporter', include: ['reporter/test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 120_000, env } },
      { test: { name: 'infra', include: ['test/infra/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 120_000, env } },
    ],
  },
});
