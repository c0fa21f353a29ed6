/**
 * Levers owned per target (shared/enforcement/decide.ts, pull.ts): the pure decision and the act taker over an
 * in-memory state store and a fake provider. Table-driven over EVERY order of create / release / delete of two
 * holders on one target — two KEY budgets on one key (on, or turned off by a person), two PROJECT budgets on one
 * project, an ACCOUNT budget over a PROJECT budget — with the customer's own cap or none: after every step the
 * provider is exactly as the holders left standing say (a key off iff someone holds it or a person turned it off; a
 * cap the lowest of the holders' amounts and the customer's own, or the customer's own when nobody holds it).
 */
import { describe, expect, it } from 'vitest';
import { decide, type DecisionInput } from '#shared/enforcement/decide.ts';
import type { Lever } from '#shared/enforcement/levers.ts';
import { takeAct } from '#shared/enforcement/pull.ts';
import { holderKey, type Claim, type LeverState, type Target } from '#shared/db/enforcement-model.ts';

const MONTH = '2026-11';
const NOW = new Date('2026-11-20T12:00:00.000Z');
const key: Target = { id: 'key:h1', kind: 'key', provider: 'anthropic', connectionId: 'con_1', keyHash: 'h1', keyId: 'apikey_1', projectId: null, name: 'prod' };
const project: Target = { id: 'project:con_1:proj_1', kind: 'project', provider: 'openai', connectionId: 'con_1', keyHash: null, keyId: null, projectId: 'proj_1', name: 'P' };

/** A provider with one key and one project limit, counting its calls. */
class FakeProvider {
  calls: string[] = [];
  constructor(
    public keyActive: boolean,
    public limit: number | null,
  ) {}
  lever(): Lever {
    return {
      provider: 'fake',
      readKey: async () => ({ active: this.keyActive }),
      stopKey: async () => {
        this.calls.push('stop');
        this.keyActive = false;
      },
      startKey: async () => {
        this.calls.push('start');
        this.keyActive = true;
      },
      readProjectLimit: async () => (this.limit === null ? null : { thresholdCents: this.limit, enforcing: false }),
      setProjectLimit: async (_p, cents) => {
        this.calls.push(`set ${cents}`);
        this.limit = cents;
        return { thresholdCents: cents, enforcing: false };
      },
      removeProjectLimit: async () => {
        this.calls.push('remove');
        this.limit = null;
      },
    };
  }
}

interface Holder {
  id: string;
  target: Target;
  /** Caps: the amount it asks for (cents). */
  cents?: number;
}

class World {
  states = new Map<string, LeverState>();
  live = new Map<string, 'exists' | 'released'>();
  constructor(readonly provider: FakeProvider) {}
  claims(holders: Holder[]): Claim[] {
    return holders
      .filter((h) => this.live.get(`budget:${h.id}`) === 'exists')
      .map((h) => ({ target: h.target, hold: { kind: 'budget', id: h.id, name: h.id, since: NOW.toISOString(), reached: true, ...(h.cents !== undefined ? { limitCents: h.cents } : {}) }, reason: 'limit_reached' }));
  }
  async pass(holders: Holder[]): Promise<number> {
    const input: DecisionInput = {
      claims: this.claims(holders),
      states: [...this.states.values()],
      month: MONTH,
      connectionsOn: new Set(['con_1']),
      holders: this.live,
      staleBefore: '2026-11-20T11:58:00.000Z',
    };
    const acts = decide(input);
    const io = {
      write: async (prev: LeverState | undefined, next: LeverState) => {
        const cur = this.states.get(next.target.id);
        if ((cur?.v ?? 0) !== (prev?.v ?? 0)) return false;
        this.states.set(next.target.id, structuredClone(next));
        return true;
      },
    };
    for (const act of acts) await takeAct(act, this.provider.lever(), io, { now: NOW, month: MONTH });
    return acts.filter((a) => a.op !== 'read_limit').length;
  }
  async settle(holders: Holder[]) {
    for (let i = 0; i < 5; i++) if ((await this.pass(holders)) === 0) return;
    throw new Error('the decision never settles');
  }
}

type Event = `${'create' | 'release' | 'delete'} ${'A' | 'B'}`;
const EVENTS: Event[] = ['create A', 'create B', 'release A', 'release B', 'delete A', 'delete B'];

/** Every order of the events in which a budget is created before it is released or deleted, and released (if at all) before it is deleted. */
function orders(): Event[][] {
  const out: Event[][] = [];
  const walk = (done: Event[], left: Event[]) => {
    if (left.length === 0) return void out.push(done);
    for (const e of left) {
      const [verb, who] = e.split(' ');
      if (verb !== 'create' && !done.includes(`create ${who}` as Event)) continue;
      if (verb === 'release' && done.includes(`delete ${who}` as Event)) continue;
      walk([...done, e], left.filter((x) => x !== e));
    }
  };
  walk([], EVENTS);
  // With and without the releases (deleting a stopped budget directly).
  walk([], EVENTS.filter((e) => !e.startsWith('release')));
  return out;
}

const scenarios: Array<{ name: string; holders: Holder[]; keyActive: boolean; own: number | null }> = [
  { name: 'two KEY budgets on one key', holders: [{ id: 'A', target: key }, { id: 'B', target: key }], keyActive: true, own: null },
  { name: 'two KEY budgets on a key a person turned off', holders: [{ id: 'A', target: key }, { id: 'B', target: key }], keyActive: false, own: null },
  { name: 'two PROJECT budgets on one project, no own limit', holders: [{ id: 'A', target: project, cents: 800_000 }, { id: 'B', target: project, cents: 900_000 }], keyActive: true, own: null },
  { name: 'two PROJECT budgets on one project, the customer’s own limit above', holders: [{ id: 'A', target: project, cents: 800_000 }, { id: 'B', target: project, cents: 900_000 }], keyActive: true, own: 9_999_900 },
  { name: 'ACCOUNT over PROJECT, the customer’s own $5 below both', holders: [{ id: 'A', target: project, cents: 10_000_000 }, { id: 'B', target: project, cents: 700_000 }], keyActive: true, own: 500 },
  { name: 'ACCOUNT over PROJECT, no own limit', holders: [{ id: 'A', target: project, cents: 10_000_000 }, { id: 'B', target: project, cents: 700_000 }], keyActive: true, own: null },
];

describe.each(scenarios)('$name: every order of create / release / delete', ({ holders, keyActive, own }) => {
  const all = orders();
  it(`never undoes a holder or a person (${all.length} orders)`, async () => {
    expect(all.length).toBeGreaterThan(20);
    for (const order of all) {
      const provider = new FakeProvider(keyActive, own);
      const world = new World(provider);
      for (const event of order) {
        const [verb, who] = event.split(' ') as ['create' | 'release' | 'delete', 'A' | 'B'];
        if (verb === 'create') world.live.set(`budget:${who}`, 'exists');
        else if (verb === 'release') world.live.set(`budget:${who}`, 'released');
        else world.live.delete(`budget:${who}`);
        await world.settle(holders);
        const standing = holders.filter((h) => world.live.get(`budget:${h.id}`) === 'exists');
        const where = `${order.join(', ')} — after ${event}`;
        if (holders[0]!.target.kind === 'key') {
          expect(provider.keyActive, where).toBe(standing.length === 0 ? keyActive : false);
          if (!keyActive) expect(provider.calls, where).toEqual([]); // a key a person turned off is never touched
        } else {
          const want = standing.length === 0 ? own : Math.min(...standing.map((h) => h.cents!), own ?? Number.MAX_SAFE_INTEGER);
          expect(provider.limit, where).toBe(want);
          if (own !== null) expect(provider.limit!, where).toBeLessThanOrEqual(own); // never raised
        }
        const state = world.states.get(holders[0]!.target.id);
        expect((state?.holds ?? []).map(holderKey).sort(), where).toEqual(standing.map((h) => `budget:${h.id}`).sort());
      }
    }
  });
});

describe('the decision', () => {
  const input = (over: Partial<DecisionInput>): DecisionInput => ({
    claims: [],
    states: [],
    month: MONTH,
    connectionsOn: new Set(['con_1']),
    holders: new Map([['budget:A', 'exists']]),
    staleBefore: '2026-11-20T11:58:00.000Z',
    ...over,
  });
  const claim: Claim = { target: key, hold: { kind: 'budget', id: 'A', name: 'A', since: NOW.toISOString(), reached: true }, reason: 'limit_reached' };
  const held = (over: Partial<LeverState> = {}): LeverState => ({ target: key, holds: [claim.hold], prior: { active: true }, status: 'stopped', want: 'on', period: MONTH, since: NOW.toISOString(), detail: '', v: 2, ...over });
  const ops = (i: DecisionInput) => decide(i).map((a) => [a.target.id, a.op, a.reason]);

  it('the first holder stops, the last releases, with the reason it let go', () => {
    expect(ops(input({ claims: [claim] }))).toEqual([['key:h1', 'stop', 'limit_reached']]);
    expect(ops(input({ claims: [claim], states: [held()] }))).toEqual([]);
    expect(ops(input({ states: [held()] }))).toEqual([['key:h1', 'start', 'budget_changed']]);
    expect(ops(input({ states: [held({ period: '2026-10' })] }))).toEqual([['key:h1', 'start', 'period_start']]);
    expect(ops(input({ states: [held()], holders: new Map() }))).toEqual([['key:h1', 'start', 'budget_deleted']]);
    expect(ops(input({ states: [held()], holders: new Map([['budget:A', 'released']]) }))).toEqual([['key:h1', 'start', 'released']]);
  });

  it('a connection with enforcement off is left alone; one being released lets every hold go (connection_changed)', () => {
    expect(ops(input({ claims: [claim], states: [held()], connectionsOn: new Set() }))).toEqual([]);
    expect(ops(input({ claims: [claim], states: [held()], connectionsOn: new Set(), connectionsReleasing: new Set(['con_1']) }))).toEqual([['key:h1', 'start', 'connection_changed']]);
  });

  it('an act under way is left to its worker; a lost one (stale) is taken again', () => {
    expect(ops(input({ claims: [claim], states: [held({ status: 'acting', since: '2026-11-20T11:59:00.000Z' })] }))).toEqual([]);
    expect(ops(input({ states: [held({ status: 'acting', since: '2026-11-20T11:00:00.000Z' })] }))).toEqual([['key:h1', 'start', 'budget_changed']]);
  });

  it('a failed stop is retried; a failed release with nobody holding is retried too', () => {
    expect(ops(input({ claims: [claim], states: [held({ status: 'failed', want: 'on' })] }))).toEqual([['key:h1', 'stop', 'limit_reached']]);
    expect(ops(input({ states: [held({ holds: [], status: 'failed', want: 'off', letGo: [{ hold: claim.hold, reason: 'released' }] })] }))).toEqual([['key:h1', 'start', 'released']]);
  });

  it('a cap is set at the lowest holder’s amount and follows it; it is read back when nothing changes', () => {
    const a: Claim = { target: project, hold: { kind: 'budget', id: 'A', name: 'A', since: NOW.toISOString(), reached: false, limitCents: 900 }, reason: 'budget_changed' };
    const b: Claim = { target: project, hold: { kind: 'budget', id: 'B', name: 'B', since: NOW.toISOString(), reached: true, limitCents: 500 }, reason: 'limit_reached' };
    const acts = decide(input({ claims: [a, b], holders: new Map([['budget:A', 'exists'], ['budget:B', 'exists']]) }));
    expect(acts.map((x) => [x.op, x.reason, x.askedCents])).toEqual([['set_limit', 'limit_reached', 500]]);
    const armed: LeverState = { target: project, holds: [a.hold, b.hold], prior: { limitCents: null }, status: 'armed', want: 'on', askedCents: 500, limitCents: 500, period: MONTH, since: NOW.toISOString(), detail: '', v: 3 };
    expect(ops(input({ claims: [a, b], states: [armed], holders: new Map([['budget:A', 'exists'], ['budget:B', 'exists']]) }))).toEqual([['project:con_1:proj_1', 'read_limit', 'limit_reached']]);
    expect(decide(input({ claims: [a], states: [armed], holders: new Map([['budget:A', 'exists']]) })).map((x) => [x.op, x.reason, x.askedCents, x.removed.map((r) => r.reason)])).toEqual([
      ['set_limit', 'budget_changed', 900, ['budget_deleted']],
    ]);
  });
});
