/**
 * Admin keys at rest: envelope encryption. Every admin key is sealed with AES-256-GCM under a fresh random 32-byte
 * data key; the encryption context `{accountId, connectionId}` is the GCM additional data, so a sealed key moved to
 * another connection does not open. The data key itself is wrapped:
 * - in AWS (`CONNECTIONS_KMS_KEY_ID` set) by the stack's KMS key with `kms:Encrypt` (create and change a connection)
 *   and unwrapped with `kms:Decrypt` (the sync worker only), the same encryption context bound by KMS;
 * - locally (`CONNECTIONS_LOCAL_KEY`: 64 hex characters, a random key made once under the data folder) with
 *   AES-256-GCM under that key.
 * The plain admin key lives in memory only for the calls that need it.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { config } from '#shared/config.ts';
import type { SealedSecret } from '#shared/db/connections.ts';

export type { SealedSecret };

export interface SecretContext {
  accountId: string;
  connectionId: string;
}

const aad = (ctx: SecretContext) => Buffer.from(JSON.stringify({ accountId: ctx.accountId, connectionId: ctx.connectionId }));

function gcmSeal(key: Buffer, plaintext: Buffer, additional: Buffer) {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(additional);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, tag: cipher.getAuthTag(), ciphertext };
}

function gcmOpen(key: Buffer, iv: Buffer, tag: Buffer, ciphertext: Buffer, additional: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(additional);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
}

export interface KeyWrapper {
  readonly kind: SealedSecret['wrap'];
  wrap(dataKey: Buffer, ctx: SecretContext): Promise<Buffer>;
  unwrap(wrapped: Buffer, ctx: SecretContext): Promise<Buffer>;
}

/** Local: the data key sealed (AES-256-GCM) under the key kept in the data folder; the packed form is iv‖tag‖ciphertext. */
export function localWrapper(masterHex: string): KeyWrapper {
  const master = Buffer.from(masterHex, 'hex');
  if (master.length !== 32) throw new Error('CONNECTIONS_LOCAL_KEY must be 32 bytes (64 hex characters).');
  return {
    kind: 'local',
    async wrap(dataKey, ctx) {
      const s = gcmSeal(master, dataKey, aad(ctx));
      return Buffer.concat([s.iv, s.tag, s.ciphertext]);
    },
    async unwrap(wrapped, ctx) {
      return gcmOpen(master, wrapped.subarray(0, 12), wrapped.subarray(12, 28), wrapped.subarray(28), aad(ctx));
    },
  };
}

let kms: KMSClient | undefined;

const kmsClient = () => (kms ??= new KMSClient({ region: config().region }));

/** AWS: the stack's KMS key, with the encryption context as KMS's own EncryptionContext (the key policy conditions on it). */
export function kmsWrapper(keyId: string, client: () => KMSClient = kmsClient): KeyWrapper {
  const context = (ctx: SecretContext) => ({ accountId: ctx.accountId, connectionId: ctx.connectionId });
  return {
    kind: 'kms',
    async wrap(dataKey, ctx) {
      const res = await client().send(new EncryptCommand({ KeyId: keyId, Plaintext: dataKey, EncryptionContext: context(ctx) }));
      if (!res.CiphertextBlob) throw new Error('KMS returned no ciphertext');
      return Buffer.from(res.CiphertextBlob);
    },
    async unwrap(wrapped, ctx) {
      const res = await client().send(new DecryptCommand({ KeyId: keyId, CiphertextBlob: wrapped, EncryptionContext: context(ctx) }));
      if (!res.Plaintext) throw new Error('KMS returned no plaintext');
      return Buffer.from(res.Plaintext);
    },
  };
}

/** The wrapper this deployment uses: KMS when `CONNECTIONS_KMS_KEY_ID` is set, else the local key. */
export function configuredWrapper(env: NodeJS.ProcessEnv = process.env): KeyWrapper {
  if (env.CONNECTIONS_KMS_KEY_ID) return kmsWrapper(env.CONNECTIONS_KMS_KEY_ID);
  if (env.CONNECTIONS_LOCAL_KEY) return localWrapper(env.CONNECTIONS_LOCAL_KEY);
  throw new Error('No key for admin keys: set CONNECTIONS_KMS_KEY_ID (AWS) or CONNECTIONS_LOCAL_KEY (local).');
}

export async function sealSecret(plaintext: string, ctx: SecretContext, wrapper: KeyWrapper = configuredWrapper()): Promise<SealedSecret> {
  const dataKey = randomBytes(32);
  try {
    const s = gcmSeal(dataKey, Buffer.from(plaintext, 'utf8'), aad(ctx));
    const wrapped = await wrapper.wrap(dataKey, ctx);
    return { wrap: wrapper.kind, wrappedKey: wrapped.toString('base64'), iv: s.iv.toString('base64'), tag: s.tag.toString('base64'), ciphertext: s.ciphertext.toString('base64') };
  } finally {
    dataKey.fill(0);
  }
}

export async function openSecret(sealed: SealedSecret, ctx: SecretContext, wrapper: KeyWrapper = configuredWrapper()): Promise<string> {
  if (sealed.wrap !== wrapper.kind) throw new Error(`The admin key was sealed with ${sealed.wrap}, this deployment unwraps with ${wrapper.kind}.`);
  const dataKey = await wrapper.unwrap(Buffer.from(sealed.wrappedKey, 'base64'), ctx);
  try {
    const b = (field: string) => Buffer.from(field, 'base64');
    return gcmOpen(dataKey, b(sealed.iv), b(sealed.tag), b(sealed.ciphertext), aad(ctx)).toString('utf8');
  } finally {
    dataKey.fill(0);
  }
}
