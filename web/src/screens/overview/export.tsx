/**
 * "Download CSV": the account's spend of the chosen range, per day, key and model. A small range comes at once
 * (GET /spend/export, saved as a file); a range past its limits (92 days, 25,000 rows) becomes an export job
 * (POST /spend/exports, then GET /spend/exports/:id until it is ready) with its progress and a download link.
 * The FOCUS format (FOCUS 1.2 cost and usage, for FinOps tools) is always an export job (`format: "focus"`).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, ok, type Schemas } from '../../api/client.ts';
import { dayRange } from '../../ui/chart.tsx';
import { useSubmit } from '../../ui/form.tsx';
import { number, when } from '../../ui/format.ts';
import { MAX_RANGE_DAYS } from '../../ui/range.tsx';
import { ErrorBox } from '../../ui/states.tsx';

/** docs/features/spend-and-exports.md: the synchronous export covers at most 92 days. */
export const MAX_EXPORT_DAYS = 92;
const POLL_MS = 1000;

/** The file name the API's Content-Disposition gives (`burnrate-spend-<from>-to-<to>.csv`). */
export function exportFilename(from: string, to: string): string {
  return `burnrate-spend-${from}-to-${to}.csv`;
}

function saveFile(text: string, filename: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

type Job = Schemas['SpendExport'];

type Format = 'csv' | 'focus';

export function ExportButton({ from, to }: { from: string; to: string }) {
  const submit = useSubmit();
  const [job, setJob] = useState<Job | undefined>();
  const [format, setFormat] = useState<Format>('csv');
  const days = dayRange(from, to).length;
  const tooLong = days > MAX_RANGE_DAYS;
  useEffect(() => setJob(undefined), [from, to, format]);
  // Follow a running job until it is ready or failed.
  useEffect(() => {
    if (job?.status !== 'running') return;
    const timer = setTimeout(() => {
      void ok(api.GET('/spend/exports/{id}', { params: { path: { id: job.id } } })).then(
        (next) => setJob(next),
        () => setJob({ ...job, status: 'failed' }),
      );
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [job]);
  const startJob = async () => setJob(await ok(api.POST('/spend/exports', { body: { from, to, ...(format === 'focus' ? { format } : {}) } })));
  const what = format === 'focus' ? 'FOCUS file' : 'CSV';
  return (
    <div class="export">
      <label>
        Format{' '}
        <select value={format} onChange={(e) => setFormat(e.currentTarget.value as Format)}>
          <option value="csv">CSV (per day, key and model)</option>
          <option value="focus">FOCUS 1.2 (for FinOps tools)</option>
        </select>
      </label>
      <button
        type="button"
        class="secondary"
        disabled={tooLong || submit.busy || job?.status === 'running'}
        aria-describedby="export-note"
        onClick={() =>
          void submit.run(async () => {
            setJob(undefined);
            if (format === 'focus' || days > MAX_EXPORT_DAYS) return startJob();
            try {
              const csv = await ok(api.GET('/spend/export', { params: { query: { from, to } }, parseAs: 'text' }));
              saveFile(csv, exportFilename(from, to));
            } catch (error) {
              // Too many rows for the synchronous export: the same CSV through an export job.
              if (error instanceof ApiError && error.problem.type?.endsWith('/export-too-large')) return startJob();
              throw error;
            }
          })
        }
      >
        {submit.busy ? `Preparing the ${what}…` : `Download ${what}`}
      </button>
      <small id="export-note" class="muted" aria-live="polite">
        {tooLong
          ? `An export covers at most ${MAX_RANGE_DAYS} days: choose a shorter range.`
          : job?.status === 'running'
            ? `Preparing the ${what} of this range… ${number(job.rows)} rows so far.`
            : job?.status === 'failed'
              ? 'The export failed: try again.'
              : format === 'focus'
                ? 'Spend of this range in FOCUS 1.2, the FinOps format that Vantage, CloudZero and Finout import (gzip).'
                : 'Spend of this range per day, key and model.'}
      </small>
      {/* The file is the CSV gzip-compressed (.csv.gz), as the bucket stores it; the link works once, for an hour. */}
      {job?.status === 'ready' && job.url && (
        <a class="download" href={job.url}>
          Download the {what} ({number(job.rows)} rows, gzip{job.expiresAt ? `; the link works once, until ${when(job.expiresAt)}` : ''})
        </a>
      )}
      <ErrorBox error={submit.error} />
    </div>
  );
}
