/**
 * DynamoDB Local on loopback only (issue 19 row 5): the stack starts the jar through a small launcher that binds its
 * Jetty connector to 127.0.0.1 (local/dynamodb-loopback/). The running check (no listener of the stack beyond
 * loopback) is in test/integration/local-safety.test.ts; here: the command line, and that the committed class is
 * what its source compiles to and runs on a JRE 17.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dynamoDbLocalArgs, dynamoDbLocalLib, LOOPBACK_LAUNCHER_DIR } from '#local/dynamodb.ts';

const CLASS = join(LOOPBACK_LAUNCHER_DIR, 'LoopbackDynamoDbLocal.class');
const SOURCE = join(LOOPBACK_LAUNCHER_DIR, 'LoopbackDynamoDbLocal.java');

/** The major version of `javac` on the PATH, or undefined without one. */
function javacMajor(): number | undefined {
  try {
    const text = execFileSync('javac', ['-version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return Number(/javac (\d+)/.exec(text)?.[1]);
  } catch {
    return undefined;
  }
}

describe('DynamoDB Local through the loopback launcher', () => {
  it('runs the launcher (not the jar’s own ServerRunner) on the advertised port, IPv4, no telemetry', () => {
    const lib = dynamoDbLocalLib();
    const args = dynamoDbLocalArgs(lib, 8123, '/data/dynamodb');
    expect(args).not.toContain('-jar');
    expect(args).toContain('LoopbackDynamoDbLocal');
    expect(args.slice(args.indexOf('LoopbackDynamoDbLocal') + 1)).toEqual(['-port', '8123', '-dbPath', '/data/dynamodb', '-sharedDb', '-disableTelemetry']);
    expect(args).toContain('-Djava.net.preferIPv4Stack=true');
    expect(args.slice(0, 2)).toEqual(['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1']);
    // In memory (the test suite's stack): no file.
    const memory = dynamoDbLocalArgs(lib, 8123, '/data/dynamodb', true);
    expect(memory.slice(memory.indexOf('LoopbackDynamoDbLocal') + 1)).toEqual(['-port', '8123', '-inMemory', '-sharedDb', '-disableTelemetry']);
    expect(args[args.indexOf('-cp') + 1]!.split(/[:;]/)).toEqual([LOOPBACK_LAUNCHER_DIR, join(lib, 'DynamoDBLocal.jar')]);
  });

  it('the committed class runs on a JRE 17 and binds 127.0.0.1', () => {
    const bytes = readFileSync(CLASS);
    expect(bytes.readUInt32BE(0)).toBe(0xcafebabe);
    expect(bytes.readUInt16BE(6)).toBe(61); // class file 61 = Java 17
    const text = bytes.toString('latin1');
    for (const name of ['127.0.0.1', 'setHost', 'isLoopbackAddress', 'createServerFromCommandLineArgs']) expect(text).toContain(name);
  });

  // javac 17 writes the same bytes for the same source: the committed class is this source's compilation.
  it.runIf(javacMajor() === 17)('the committed class is the compilation of its source (javac 17)', () => {
    const lib = dynamoDbLocalLib();
    const out = mkdtempSync(join(tmpdir(), 'ddb-launcher-'));
    try {
      execFileSync('javac', ['--release', '17', '-cp', `${join(lib, 'DynamoDBLocal.jar')}:${join(lib, 'DynamoDBLocal_lib', '*')}`, '-d', out, SOURCE]);
      expect(readFileSync(join(out, 'LoopbackDynamoDbLocal.class')).equals(readFileSync(CLASS)), 'rebuild it: see the command in the .java file').toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);
});
