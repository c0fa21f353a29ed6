/** The carry-over of the earlier enforcement layout (shared/db/enforcement-legacy.ts), case by case. */
import { describe, expect, it } from 'vitest';
import { carryOver, type LegacyState } from '#shared/db/enforcement-legacy.ts';
import type { LeverState } from '#shared/db/enforcement-model.ts';

const month = '2026-11';
const at = '2026-11-20T10:00:00.000Z';
const keyTarget = { id: 'key:h1', kind: 'key' as const, provider: 'anthropic', connectionId: 'con_1', keyHash: 'h1', keyId: 'apikey_1', projectId: null, name: 'prod' };
const projectTarget = (limitCents: number) => ({ id: 'project:con_2:proj_1', kind: 'project' as const, provider: 'openai', connectionId: 'con_2', keyHash: null, keyId: null, projectId: 'proj_1', name: 'Web', limitCents });
const old = (budgetId: string, fields: Partial<LegacyState>): LegacyState => ({
  sk: `ENFORCE#${budgetId}#${(fields.target ?? keyTarget).id}`,
  budgetId,
  target: keyTarget,
  status: 'stopped',
  want: 'on',
  hold: false,
  period: month,
  since: '2026-11-19T10:00:00.000Z',
  ...fields,
});

describe('carrying over the earlier layout', () => {
  it('a key an old budget stopped: held by it, on before', () => {
    const { state, releases, taken } = carryOver([old('bud_a', {})], undefined, month, at);
    expect(state).toMatchObject({ target: keyTarget, status: 'stopped', want: 'on', prior: { active: true }, holds: [{ kind: 'budget', id: 'bud_a', reached: true, name: null }], migratedFrom: ['ENFORCE#bud_a#key:h1'], v: 1 });
    expect(releases).toEqual([]);
    expect(taken).toEqual(['ENFORCE#bud_a#key:h1']);
  });

  it('released by a person this month: a release record, the key still off to be put back', () => {
    const { state, releases } = carryOver([old('bud_a', { status: 'released', want: 'off', hold: true, releasedBy: 'usr_1' })], undefined, month, at);
    expect(state).toBeUndefined(); // released: the key was already put back
    expect(releases).toEqual([{ holder: { kind: 'budget', id: 'bud_a' }, period: month, by: 'usr_1', at: '2026-11-19T10:00:00.000Z' }]);
    // A put-back that failed: nobody holds it, the next pass switches it on again.
    const failed = carryOver([old('bud_a', { status: 'failed', want: 'off', hold: true })], undefined, month, at).state;
    expect(failed).toMatchObject({ holds: [], status: 'failed', want: 'off', prior: { active: true } });
    // A release of a past month is not carried.
    expect(carryOver([old('bud_a', { status: 'released', hold: true, period: '2026-10' })], undefined, month, at).releases).toEqual([]);
  });

  it('a stop that failed: held, not pulled, and the next stop reads the key (no prior guessed)', () => {
    const { state } = carryOver([old('bud_a', { status: 'failed', want: 'on' })], undefined, month, at);
    expect(state).toMatchObject({ status: 'failed', want: 'on', holds: [{ id: 'bud_a' }] });
    expect(state!.prior).toBeUndefined();
  });

  it('two old budgets on one project: the customer’s own limit is the earliest that is no old budget’s own', () => {
    const a = old('bud_a', { target: projectTarget(800_000), status: 'armed', limitCents: 800_000, priorLimitCents: 5_000_000, since: '2026-11-01T00:00:00.000Z' });
    const b = old('bud_b', { target: projectTarget(900_000), status: 'armed', limitCents: 900_000, priorLimitCents: 800_000, since: '2026-11-02T00:00:00.000Z' });
    const { state } = carryOver([b, a], undefined, month, at);
    expect(state).toMatchObject({ status: 'armed', want: 'on', prior: { limitCents: 5_000_000 }, limitCents: 900_000, askedCents: 900_000 });
    expect(state!.holds.map((h) => [h.id, h.limitCents, h.reached])).toEqual([['bud_a', 800_000, false], ['bud_b', 900_000, false]]);
    expect('limitCents' in state!.target).toBe(false);
    // The customer had none: null, put back as none.
    expect(carryOver([old('bud_a', { target: projectTarget(800_000), status: 'armed', limitCents: 800_000, priorLimitCents: null })], undefined, month, at).state!.prior).toEqual({ limitCents: null });
  });

  it('joins a state written since, once: a marker lost after the write takes nothing in twice', () => {
    const existing: LeverState = {
      target: keyTarget,
      holds: [{ kind: 'anomaly', id: 'rul_1#h1', name: 'Runaway', since: at, reached: true }],
      prior: { active: false }, // read after Burnrate's old act had switched it off
      status: 'stopped',
      want: 'on',
      period: month,
      since: at,
      detail: '',
      v: 4,
    };
    const first = carryOver([old('bud_a', {})], existing, month, at).state!;
    expect(first).toMatchObject({ status: 'stopped', prior: { active: true }, v: 5, migratedFrom: ['ENFORCE#bud_a#key:h1'] });
    expect(first.holds.map((h) => `${h.kind}:${h.id}`)).toEqual(['anomaly:rul_1#h1', 'budget:bud_a']);
    const again = carryOver([old('bud_a', {})], first, month, at);
    expect(again.state).toBeUndefined(); // nothing new: no write
    expect(again.taken).toEqual(['ENFORCE#bud_a#key:h1']); // only the marker
  });
});
