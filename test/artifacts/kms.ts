/**
 * A stand-in for AWS KMS in the artifact tests: the symmetric-key operations our functions call (`Encrypt`,
 * `Decrypt`: shared/connections/secrets.ts), over KMS's JSON protocol (`X-Amz-Target: TrentService.<Operation>`,
 * `application/x-amz-json-1.1`, blobs as base64, errors as `{__type, message}` with HTTP 400), written from the KMS
 * API reference:
 * - a key is named by its key ID or key ARN (aliases are not modelled: NotFoundException);
 * - `Encrypt` takes 1–4,096 bytes of plaintext and an optional `EncryptionContext` (string → string) and answers
 *   `{CiphertextBlob, KeyId: <key ARN>, EncryptionAlgorithm: SYMMETRIC_DEFAULT}`;
 * - the encryption context is bound to the ciphertext as additional authenticated data: `Decrypt` must be given the
 *   same context (an exact, case-sensitive match of the pairs, in any order), else `InvalidCiphertextException`;
 *   a corrupted or foreign blob is `InvalidCiphertextException` too;
 * - the blob names its key (KMS adds that metadata to symmetric ciphertext), so `Decrypt`'s `KeyId` is optional;
 *   given, it must be that key (`IncorrectKeyException`); it answers `{KeyId, Plaintext, EncryptionAlgorithm}`.
 * Each key's material is random, made when the stand-in is (one per test run): ciphertext from one run never opens
 * in another, and nothing here is a secret of the product.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export interface KmsError {
  __type: string;
  message: string;
}

/** An answer: 200 with the operation's output, or 400 with {__type, message}. */
export interface KmsReply {
  status: 200 | 400;
  body: Record<string, any>;
}

export interface LocalKms {
  /** The key ARNs it holds. */
  readonly keyArns: readonly string[];
  /** The ARN of a key ID or key ARN it holds. */
  resolve(keyId: string): string | undefined;
  /** The key a request acts on (what IAM authorizes it against): `KeyId`, else for Decrypt the blob's key. */
  keyOf(operation: string, input: Record<string, any>): string | undefined;
  /** Answers one request (after IAM allowed it). */
  handle(operation: string, input: Record<string, any>): KmsReply;
}

const ALGORITHM = 'SYMMETRIC_DEFAULT';
/** Blob layout: version ‖ ARN length (2 bytes) ‖ key ARN ‖ IV (12) ‖ GCM tag (16) ‖ ciphertext. */
const VERSION = 0x01;
const MAX_PLAINTEXT = 4096;

const error = (type: string, message: string): KmsReply => ({ status: 400, body: { __type: type, message } });

/** The encryption context as additional authenticated data: its pairs sorted by key (the order never matters). */
function contextAad(context: Record<string, string>): Buffer {
  return Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))), 'utf8');
}

function parseBlob(blob: Buffer): { keyArn: string; iv: Buffer; tag: Buffer; ciphertext: Buffer } | undefined {
  if (blob.length < 3 || blob[0] !== VERSION) return undefined;
  const arnLength = blob.readUInt16BE(1);
  const at = 3 + arnLength;
  if (blob.length < at + 12 + 16 + 1) return undefined;
  return { keyArn: blob.subarray(3, at).toString('utf8'), iv: blob.subarray(at, at + 12), tag: blob.subarray(at + 12, at + 28), ciphertext: blob.subarray(at + 28) };
}

/** A base64 blob of the JSON protocol, or undefined when it is not one. */
function blobOf(value: unknown): Buffer | undefined {
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) return undefined;
  return Buffer.from(value, 'base64');
}

/** A string → string map (or absent); undefined when it is something else. */
function contextOf(value: unknown): Record<string, string> | undefined {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return undefined;
  return Object.values(value).every((v) => typeof v === 'string') ? (value as Record<string, string>) : undefined;
}

/** The key ID of a key ARN: `arn:aws:kms:<region>:<account>:key/<key id>`. */
const keyIdOf = (arn: string) => arn.slice(arn.indexOf(':key/') + ':key/'.length);

/** A key ID in KMS's form (a UUID), the same for the same name. */
export function kmsKeyId(name: string): string {
  const h = createHash('sha256').update(name).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function localKms(keyArns: readonly string[]): LocalKms {
  const material = new Map(keyArns.map((arn) => [arn, randomBytes(32)]));
  const resolve = (keyId: string) => keyArns.find((arn) => arn === keyId || keyIdOf(arn) === keyId);

  function encrypt(input: Record<string, any>): KmsReply {
    if (typeof input.KeyId !== 'string' || !input.KeyId) return error('ValidationException', "1 validation error detected: Value null at 'keyId' failed to satisfy constraint: Member must not be null");
    const arn = resolve(input.KeyId);
    if (!arn) return error('NotFoundException', `Key '${input.KeyId}' does not exist`);
    const plaintext = blobOf(input.Plaintext);
    if (!plaintext || plaintext.length < 1 || plaintext.length > MAX_PLAINTEXT) {
      return error('ValidationException', `1 validation error detected: Value at 'plaintext' failed to satisfy constraint: Member must have length between 1 and ${MAX_PLAINTEXT}`);
    }
    const context = contextOf(input.EncryptionContext);
    if (!context) return error('ValidationException', "Value at 'encryptionContext' failed to satisfy constraint: Map value must be a string");
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', material.get(arn)!, iv);
    cipher.setAAD(contextAad(context));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const arnBytes = Buffer.from(arn, 'utf8');
    const header = Buffer.alloc(3);
    header[0] = VERSION;
    header.writeUInt16BE(arnBytes.length, 1);
    const blob = Buffer.concat([header, arnBytes, iv, cipher.getAuthTag(), ciphertext]);
    return { status: 200, body: { CiphertextBlob: blob.toString('base64'), KeyId: arn, EncryptionAlgorithm: ALGORITHM } };
  }

  function decrypt(input: Record<string, any>): KmsReply {
    const blob = blobOf(input.CiphertextBlob);
    const parsed = blob && parseBlob(blob);
    if (!parsed) return error('InvalidCiphertextException', '');
    if (input.KeyId !== undefined) {
      const named = typeof input.KeyId === 'string' ? resolve(input.KeyId) : undefined;
      if (!named) return error('NotFoundException', `Key '${String(input.KeyId)}' does not exist`);
      if (named !== parsed.keyArn) return error('IncorrectKeyException', 'The key ID in the request does not identify a CMK that can perform this operation.');
    }
    const key = material.get(parsed.keyArn);
    if (!key) return error('InvalidCiphertextException', '');
    const context = contextOf(input.EncryptionContext);
    if (!context) return error('ValidationException', "Value at 'encryptionContext' failed to satisfy constraint: Map value must be a string");
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, parsed.iv);
      decipher.setAAD(contextAad(context));
      decipher.setAuthTag(parsed.tag);
      const plaintext = Buffer.concat([decipher.update(parsed.ciphertext), decipher.final()]);
      return { status: 200, body: { KeyId: parsed.keyArn, Plaintext: plaintext.toString('base64'), EncryptionAlgorithm: ALGORITHM } };
    } catch {
      // Another encryption context (or a changed blob): the authenticated data does not match. KMS says no more.
      return error('InvalidCiphertextException', '');
    }
  }

  return {
    keyArns,
    resolve,
    keyOf(operation, input) {
      if (typeof input.KeyId === 'string') return resolve(input.KeyId);
      if (operation !== 'Decrypt') return undefined;
      const blob = blobOf(input.CiphertextBlob);
      return blob ? parseBlob(blob)?.keyArn : undefined;
    },
    handle(operation, input) {
      // What our code does not use is not modelled: a loud refusal, never a guess.
      for (const field of ['DryRun', 'Recipient', 'GrantTokens']) {
        if (input[field] !== undefined) return error('UnsupportedOperationException', `the artifact tests' KMS does not model ${field}`);
      }
      if (input.EncryptionAlgorithm !== undefined && input.EncryptionAlgorithm !== ALGORITHM) {
        return error('InvalidKeyUsageException', `${String(input.EncryptionAlgorithm)} is not valid for a symmetric encryption KMS key`);
      }
      if (operation === 'Encrypt') return encrypt(input);
      if (operation === 'Decrypt') return decrypt(input);
      return error('UnsupportedOperationException', `KMS ${operation} is not stood in for`);
    },
  };
}
