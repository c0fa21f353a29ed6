/** Settlement's pure parts: the largest-remainder split, each provider's day settled to its bill, the corrections, and the cost queries as the references spell them. */
import { describe, expect, it } from 'vitest';
import { corrections, largestRemainder, settleAnthropicDay, settleOpenAiDay, settleReportedDay, settles, type BillRow, type Estimate } from '#shared/connections/settle.ts';
import { centsToPicos, dollarsToPicos } from '#shared/connections/decimal.ts';
import { openAiClient } from '#shared/connections/openai.ts';
import { anthropicClient } from '#shared/connections/anthropic.ts';
import { readPlan } from '#shared/connections/sync.ts';
import { isSettled, pendingDays } from '#shared/spend/coverage.ts';

const D = '2026-11-20';
const est = (keyId: string | null, projectId: string | null, model: string, tier: string, costMicros: bigint, tokens = 1000n): Estimate => ({ date: D, keyId, projectId, model, tier, costMicros, tokens });
const all = () => true;
const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);

describe('largest remainder', () => {
  it('sums to the total exactly, each share within one micro-dollar of its exact share', () => {
    const shares = largestRemainder(1_000_001n, [1n, 1n, 1n])!;
    expect(sum(shares)).toBe(1_000_001n);
    expect(shares).toEqual([333_334n, 333_334n, 333_333n]);
    const odd = largestRemainder(999n, [7n, 0n, 13n, 5n])!;
    expect(sum(odd)).toBe(999n);
    expect(odd[1]).toBe(0n);
    [7n, 0n, 13n, 5n].forEach((w, i) => expect(Number(odd[i]!) - (999 * Number(w)) / 25).toBeLessThan(1));
  });
  it('splits a credit by magnitude and has nothing to split over zero weights', () => {
    expect(sum(largestRemainder(-10n, [1n, 2n])!)).toBe(-10n);
    expect(largestRemainder(10n, [0n, 0n])).toBeUndefined();
  });
});

describe('Anthropic: a workspace bill allocated to its keys', () => {
  const cents = (c: string) => centsToPicos(c);
  const row = (projectId: string | null, model: string | null, tier: string | null, amount: string, costType = 'tokens', line = `${model} usage`): BillRow => ({ date: D, projectId, line, costType, model, tier, picos: cents(amount) });

  it('splits a (workspace, model, tier) bill over the keys by their estimates, exact to the micro-dollar', () => {
    const estimates = [est('k1', 'w1', 'claude-sonnet-4-5', 'standard', 2_000_000n), est('k2', 'w1', 'claude-sonnet-4-5', 'standard', 1_000_000n), est('k3', 'w2', 'claude-sonnet-4-5', 'standard', 5_000_000n)];
    // $3.3333335 for w1 (two token-type rows), $4.90 for w2.
    const s = settleAnthropicDay({ date: D, rows: [row('w1', 'claude-sonnet-4-5', 'standard', '300'), row('w1', 'claude-sonnet-4-5', 'standard', '33.33335'), row('w2', 'claude-sonnet-4-5', 'standard', '490')] }, estimates, all);
    const k1 = s.targets.get('k1|claude-sonnet-4-5')!.micros;
    const k2 = s.targets.get('k2|claude-sonnet-4-5')!.micros;
    expect(k1 + k2).toBe(3_333_334n); // the workspace's bill, rounded once
    expect(k1).toBe(2_222_223n);
    expect(s.targets.get('k3|claude-sonnet-4-5')!.micros).toBe(4_900_000n);
    expect(s.billedMicros).toBe(3_333_334n + 4_900_000n);
  });

  it('allocates a long-context bill only over the long-context usage of its (workspace, model, tier), on a line of its own', () => {
    // k1 and k2 both use Sonnet 4.5 in w1; only k1 sent prompts past 200K tokens. Weighted by estimates alone, the
    // long-context bill ($34.50) would be shared with k2.
    const estimates = [
      est('k1', 'w1', 'claude-sonnet-4-5', 'standard', 1_000_000n),
      { ...est('k1', 'w1', 'claude-sonnet-4-5', 'standard', 34_500_000n), longContext: true as const },
      est('k2', 'w1', 'claude-sonnet-4-5', 'standard', 1_000_000n),
    ];
    const long = { ...row('w1', 'claude-sonnet-4-5', 'standard', '3450'), longContext: true as const };
    const s = settleAnthropicDay({ date: D, rows: [row('w1', 'claude-sonnet-4-5', 'standard', '200'), long] }, estimates, all);
    expect(s.targets.get('k1|claude-sonnet-4-5')!.micros).toBe(1_000_000n + 34_500_000n);
    expect(s.targets.get('k2|claude-sonnet-4-5')!.micros).toBe(1_000_000n);
    expect(s.lines).toEqual(
      expect.arrayContaining([
        { line: 'claude-sonnet-4-5', estimatedMicros: 2_000_000n, billedMicros: 2_000_000n, reason: null },
        { line: 'claude-sonnet-4-5, long context', estimatedMicros: 34_500_000n, billedMicros: 34_500_000n, reason: null },
      ]),
    );
  });

  it('puts a bill without an estimate behind it on the workspace’s share of the unattributed key', () => {
    const s = settleAnthropicDay({ date: D, rows: [row('w1', 'claude-opus-4-5', 'standard', '100'), row('w1', null, null, '25', 'code_execution', 'Code Execution Usage')] }, [est('k1', 'w1', 'claude-haiku-4-5', 'standard', 10n)], all);
    expect(s.targets.get('|claude-opus-4-5')!.micros).toBe(1_000_000n);
    expect(s.targets.get('|Code Execution Usage')!.micros).toBe(250_000n);
    // The estimate without a bill goes to 0: the bill wins.
    expect(s.targets.get('k1|claude-haiku-4-5')!.micros).toBe(0n);
    expect(s.lines.find((l) => l.line === 'Code Execution Usage')).toMatchObject({ estimatedMicros: 0n, billedMicros: 250_000n, reason: 'not_estimated' });
  });

  it('keeps Priority Tier at its estimate, on its own line the bill does not have', () => {
    const estimates = [est('k1', 'w1', 'claude-opus-4-5', 'priority', 7_000_000n), est('k1', 'w1', 'claude-opus-4-5', 'standard', 1_000_000n)];
    const s = settleAnthropicDay({ date: D, rows: [row('w1', 'claude-opus-4-5', 'standard', '120')] }, estimates, all);
    expect(s.targets.get('k1|claude-opus-4-5')!.micros).toBe(7_000_000n + 1_200_000n);
    expect(s.billedMicros).toBe(1_200_000n);
    expect(s.lines).toContainEqual({ line: 'claude-opus-4-5 (priority)', estimatedMicros: 7_000_000n, billedMicros: null, reason: 'priority_tier' });
    // The aggregates hold both estimates; the correction brings the standard part to the bill.
    expect(corrections(s, estimates).get('k1|claude-opus-4-5')!.micros).toBe(200_000n);
  });

  it('weighs by tokens when no key’s usage of the model is priced, and web search by requests', () => {
    const estimates = [est('k1', 'w1', 'claude-fable-5-2', 'standard', 0n, 3000n), { ...est('k2', 'w1', 'claude-fable-5-2', 'standard', 0n, 1000n), webSearchRequests: 3 }, { ...est('k1', 'w1', 'x', 'standard', 0n, 0n), webSearchRequests: 1 }];
    const s = settleAnthropicDay({ date: D, rows: [row('w1', 'claude-fable-5-2', 'standard', '400'), row('w1', null, null, '4', 'web_search', 'Web Search Usage')] }, estimates, all);
    expect(s.targets.get('k1|claude-fable-5-2')!.micros).toBe(3_000_000n);
    // A key's share of the searches goes to the row whose estimate holds them (its model's).
    expect(s.targets.get('k2|claude-fable-5-2')!.micros).toBe(1_030_000n);
    expect(s.targets.get('k1|x')!.micros).toBe(10_000n);
    expect(s.targets.has('k2|Web Search Usage')).toBe(false);
    expect(s.lines.find((l) => l.line === 'claude-fable-5-2')!.reason).toBe('unpriced');
  });

  it('allocates a token line by the keys\' token estimates only: a key\'s web searches weigh on the search line, not on the tokens', () => {
    // Tokens exactly 1 : 3 ($0.45 : $1.35 at $3/$15), 30 searches ($0.30) by k1: a bill of $1.80 tokens + $0.30 searches.
    const estimates = [{ ...est('k1', 'w1', 'claude-sonnet-4-5', 'standard', 750_000n), webSearchRequests: 30 }, est('k2', 'w1', 'claude-sonnet-4-5', 'standard', 1_350_000n)];
    const s = settleAnthropicDay({ date: D, rows: [row('w1', 'claude-sonnet-4-5', 'standard', '180'), row('w1', null, null, '30', 'web_search', 'Web Search Usage')] }, estimates, all);
    expect(s.targets.get('k1|claude-sonnet-4-5')!.micros).toBe(750_000n);
    expect(s.targets.get('k2|claude-sonnet-4-5')!.micros).toBe(1_350_000n);
  });

  it('shows the web searches an estimate holds on the bill\'s web search line, not on its model\'s line', () => {
    // $10 per 1,000 searches: 5 searches are $0.05 of the key's $1.05 estimate.
    const estimates = [{ ...est('k1', 'w1', 'claude-sonnet-4-5', 'standard', 1_050_000n), webSearchRequests: 5 }];
    const s = settleAnthropicDay({ date: D, rows: [row('w1', 'claude-sonnet-4-5', 'standard', '100'), row('w1', null, null, '5', 'web_search', 'Web Search Usage')] }, estimates, all);
    expect(s.lines).toEqual([
      { line: 'Web Search Usage', estimatedMicros: 50_000n, billedMicros: 50_000n, reason: null },
      { line: 'claude-sonnet-4-5', estimatedMicros: 1_000_000n, billedMicros: 1_000_000n, reason: null },
    ]);
  });

  it('leaves the share of an untracked key out of the figures, on a plan line', () => {
    const estimates = [est('k1', 'w1', 'm', 'standard', 1_000_000n), est('k2', 'w1', 'm', 'standard', 1_000_000n)];
    const s = settleAnthropicDay({ date: D, rows: [row('w1', 'm', 'standard', '200')] }, estimates, (k) => k !== 'k2');
    expect(s.targets.get('k1|m')!.micros).toBe(1_000_000n);
    expect(s.targets.has('k2|m')).toBe(false);
    expect(s.lines).toEqual([{ line: 'm', estimatedMicros: 1_000_000n, billedMicros: 2_000_000n, reason: 'plan_key_limit' }]);
  });
});

describe('OpenAI: each key’s line items', () => {
  const row = (keyId: string | null, line: string, dollars: number): BillRow => ({ date: D, keyId, projectId: 'p', line, picos: dollarsToPicos(dollars) });
  it('bills each key its line items; a line item names its model; storage goes to the unattributed key\'s row of vector stores', () => {
    const estimates = [est('k1', 'p', 'gpt-5.1', 'standard', 900_000n), est('k2', 'p', 'gpt-4o', 'standard', 50_000n)];
    const s = settleOpenAiDay({ date: D, rows: [row('k1', 'gpt-5.1, input', 0.4), row('k1', 'gpt-5.1, output', 0.6000004), row(null, 'Vector storage', 0.1)] }, estimates, all);
    expect(s.targets.get('k1|gpt-5.1')!.micros).toBe(1_000_000n);
    expect(s.targets.get('|vector_stores')!.micros).toBe(100_000n);
    expect(s.targets.get('k2|gpt-4o')!.micros).toBe(0n);
    expect(s.billedMicros).toBe(1_100_000n);
    const c = corrections(s, estimates);
    expect(c.get('k1|gpt-5.1')!.micros).toBe(100_000n);
    expect(c.get('k2|gpt-4o')!.micros).toBe(-50_000n);
  });
  it('bills usage beyond tokens to its unit row, tier lines to their model; the rows usage reads', () => {
    const estimates = [
      est('k1', 'p', 'gpt-5.1', 'priority', 700_000n),
      est('k1', 'p', 'web_search_calls:gpt-5.1', 'web_search_calls', 20_000n),
      est('k1', 'p', 'images:dall-e-3', 'images', 80_000n),
      est(null, 'p', 'code_interpreter_sessions', 'code_interpreter_sessions', 30_000n),
    ];
    const s = settleOpenAiDay(
      {
        date: D,
        rows: [
          row('k1', 'gpt-5.1, input (priority)', 0.5),
          row('k1', 'gpt-5.1, output (priority)', 0.25),
          row('k1', 'gpt-5.1, web search tool calls', 0.02),
          row('k1', 'dall-e-3, images', 0.08),
          row('k1', 'file search tool calls', 0.005),
          row(null, 'code interpreter sessions', 0.03),
        ],
      },
      estimates,
      all,
    );
    expect(Object.fromEntries([...s.targets].map(([id, t]) => [id, t.micros]))).toEqual({
      'k1|gpt-5.1': 750_000n,
      'k1|web_search_calls:gpt-5.1': 20_000n,
      'k1|images:dall-e-3': 80_000n,
      'k1|file_search_calls': 5_000n,
      '|code_interpreter_sessions': 30_000n,
    });
    expect(s.lines.find((l) => l.line === 'images:dall-e-3')).toEqual({ line: 'images:dall-e-3', estimatedMicros: 80_000n, billedMicros: 80_000n, reason: null });
  });
});

describe('OpenAI: the costs endpoint\'s real line-item wording', () => {
  const row = (keyId: string | null, line: string, dollars: number): BillRow => ({ date: D, keyId, projectId: 'p', line, picos: dollarsToPicos(dollars) });
  it('a tier prefix ("priority | "), a ", long context" suffix and a modality word after the model still name the model; "Vector storage" is storage', () => {
    const estimates = [
      est('k1', 'p', 'gpt-5.1', 'priority', 700_000n),
      est('k1', 'p', 'gpt-audio-mini-2025-12-15', 'standard', 10_000n),
      est(null, 'p', 'vector_stores', 'vector_stores', 100_000n),
      est('k1', 'p', 'web_search_calls:gpt-5.1', 'web_search_calls', 20_000n),
    ];
    const s = settleOpenAiDay(
      {
        date: D,
        rows: [
          row('k1', 'priority | gpt-5.1, input', 0.5),
          row('k1', 'priority | gpt-5.1, output, long context', 0.25),
          row('k1', 'gpt-audio-mini-2025-12-15 audio, input', 0.01),
          row('k1', 'gpt-audio-mini-2025-12-15 text, cached input', 0.002),
          row(null, 'Vector storage', 0.1),
          row('k1', 'web search tool calls', 0.02),
        ],
      },
      estimates,
      all,
    );
    expect(Object.fromEntries([...s.targets].map(([id, t]) => [id, t.micros]))).toEqual({
      'k1|gpt-5.1': 750_000n,
      'k1|gpt-audio-mini-2025-12-15': 12_000n,
      '|vector_stores': 100_000n,
      'k1|web_search_calls:gpt-5.1': 20_000n, // the line names no model: the key's one row of web search calls
    });
  });
});

describe('when a day settles', () => {
  it('a past day with a bill; an empty past day only without usage; never today', () => {
    const usage = [est('k', null, 'm', 'standard', 5n)];
    expect(settles({ date: '2026-11-19', rows: [{ date: '2026-11-19', projectId: null, line: 'x', picos: 1n }] }, usage, '2026-11-20', '2026-11-19')).toBe(true);
    expect(settles({ date: '2026-11-19', rows: [] }, usage, '2026-11-20', '2026-11-19')).toBe(false);
    expect(settles(undefined, [], '2026-11-20', '2026-11-19')).toBe(true);
    expect(settles({ date: '2026-11-20', rows: [{ date: '2026-11-20', projectId: null, line: 'x', picos: 1n }] }, usage, '2026-11-20', '2026-11-20')).toBe(false);
  });
});

describe('cost queries as the references spell them', () => {
  const capture = () => {
    const asked: string[] = [];
    const fetch = (async (input: URL | string) => {
      const url = new URL(String(input));
      asked.push(`${url.pathname}?${url.searchParams}`);
      return new Response(JSON.stringify({ data: [], has_more: false, next_page: null }), { status: 200, headers: { 'content-type': 'application/json' } });
    }) as typeof globalThis.fetch;
    return { asked, fetch };
  };
  it('OpenAI: GET /v1/organization/costs with a repeated group_by of project_id, line_item and api_key_id', async () => {
    const { asked, fetch } = capture();
    await openAiClient('https://api.openai.test', 'sk-admin-x', { fetch }).readBilled('2026-11-01', '2026-11-08');
    expect(asked).toEqual([`/v1/organization/costs?start_time=${Date.UTC(2026, 10, 1) / 1000}&end_time=${Date.UTC(2026, 10, 8) / 1000}&bucket_width=1d&group_by=project_id&group_by=line_item&group_by=api_key_id&limit=180`]);
  });
  it('Anthropic: GET /v1/organizations/cost_report with group_by[] workspace_id and description', async () => {
    const { asked, fetch } = capture();
    await anthropicClient('https://api.anthropic.test', 'sk-ant-admin01-x', { fetch }).readBilled('2026-11-01', '2026-11-08');
    expect(asked).toEqual([
      '/v1/organizations/cost_report?starting_at=2026-11-01T00%3A00%3A00Z&ending_at=2026-11-08T00%3A00%3A00Z&bucket_width=1d&group_by%5B%5D=workspace_id&group_by%5B%5D=description&limit=31',
    ]);
  });
});

describe('what a sync reads, newest first', () => {
  const conn = { importedFrom: '2026-10-01', lastSuccessAt: null, backfillTo: null };
  it('a first sync: this month first (today included), newest slices first, never across a month; then the month before', () => {
    const plan = readPlan({ ...conn, cursor: '2026-10-01' }, '2026-11-12', 7);
    expect(plan.recent).toEqual([]);
    expect(plan.backfill).toEqual([
      ['2026-11-06', '2026-11-12'],
      ['2026-11-01', '2026-11-05'],
      ['2026-10-25', '2026-10-31'],
      ['2026-10-18', '2026-10-24'],
      ['2026-10-11', '2026-10-17'],
      ['2026-10-04', '2026-10-10'],
      ['2026-10-01', '2026-10-03'],
    ]);
  });
  it('a backfill resumed: the recent days after it first, then on from where it stopped', () => {
    const plan = readPlan({ ...conn, cursor: '2026-10-01', backfillTo: '2026-10-24', lastSuccessAt: null }, '2026-11-12', 7);
    expect(plan.recent).toEqual([['2026-11-09', '2026-11-12']]);
    expect(plan.backfill[0]).toEqual(['2026-10-18', '2026-10-24']);
  });
  it('no backfill: the 3 days before today and today', () => {
    expect(readPlan({ ...conn, cursor: null, lastSuccessAt: '2026-11-12T08:00:00Z' }, '2026-11-12', 7)).toEqual({ recent: [['2026-11-09', '2026-11-12']], backfill: [] });
  });
});

describe('coverage: pending and settled days of a connection', () => {
  const c = { importedFrom: '2026-10-01', cursor: null, backfillTo: null, lastSuccessAt: '2026-11-12T08:00:00Z', unsettledDays: ['2026-11-10', '2026-11-12'] };
  it('a day is settled when imported, past, not pending and billed', () => {
    expect(isSettled(c, '2026-11-11', '2026-11-12')).toBe(true);
    expect(isSettled(c, '2026-11-10', '2026-11-12')).toBe(false);
    expect(isSettled(c, '2026-11-12', '2026-11-12')).toBe(false);
    expect(isSettled(c, '2026-09-30', '2026-11-12')).toBe(false);
    expect(isSettled({ ...c, cursor: '2026-10-01', backfillTo: '2026-10-20' }, '2026-10-05', '2026-11-12')).toBe(false);
  });
  it('pending: every day until the first sync is done; the rest of a backfill under way', () => {
    expect(pendingDays({ ...c, lastSuccessAt: null }, '2026-11-12')).toEqual(['2026-10-01', '2026-11-12']);
    expect(pendingDays({ ...c, lastSuccessAt: null, cursor: '2026-10-01', backfillTo: '2026-10-31' }, '2026-11-12')).toEqual(['2026-10-01', '2026-10-31']);
    expect(pendingDays(c, '2026-11-12')).toBeNull();
  });
});

describe('OpenRouter: the account’s activity per model', () => {
  const row = (model: string, usd: string): BillRow => ({ date: D, keyId: null, projectId: null, line: model, model, picos: dollarsToPicos(Number(usd)) });
  it('what the keys’ activity does not explain goes to the connection’s usage without a key, so the day shows the bill exactly', () => {
    const s = settleReportedDay({ date: D, rows: [row('openai/gpt-4.1', '7.24'), row('google/gemini-2.5-flash', '1.05')] }, [est('k1', null, 'openai/gpt-4.1', 'standard', 7_000_000n), est('k2', null, 'google/gemini-2.5-flash', 'standard', 1_050_000n)], all);
    expect(s.billedMicros).toBe(8_290_000n);
    expect([...s.targets.values()]).toEqual([{ keyId: null, row: 'openai/gpt-4.1', micros: 240_000n }]);
    const shown = 7_000_000n + 1_050_000n + sum([...s.targets.values()].map((t) => t.micros));
    expect(shown).toBe(s.billedMicros);
    expect(s.lines).toEqual([
      { line: 'google/gemini-2.5-flash', estimatedMicros: 1_050_000n, billedMicros: 1_050_000n, reason: null },
      { line: 'openai/gpt-4.1', estimatedMicros: 7_000_000n, billedMicros: 7_240_000n, reason: 'not_estimated' },
    ]);
  });
  it('a key past the plan’s key limit stays out (its line says so), and the keyless rest is only what no key explains', () => {
    const s = settleReportedDay({ date: D, rows: [row('openai/gpt-4.1', '3')] }, [est('k1', null, 'openai/gpt-4.1', 'standard', 1_000_000n), est('k2', null, 'openai/gpt-4.1', 'standard', 2_000_000n)], (k) => k !== 'k2');
    expect(s.targets.size).toBe(0);
    expect(s.lines).toEqual([{ line: 'openai/gpt-4.1', estimatedMicros: 1_000_000n, billedMicros: 3_000_000n, reason: 'plan_key_limit' }]);
  });
});
