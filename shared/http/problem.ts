import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { HttpError, type FieldError } from '#shared/http/errors.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
/** The Cache-Control of every API response (the HTTP layer and the local gateway set it). */
export const CACHE_CONTROL = 'no-store';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: FieldError[];
  /** The request id, to quote to support and find in the logs. */
  instance?: string;
}

/** Maps any thrown value to a problem. Only HttpError text is shown; everything else is a bare 500. */
export function toProblem(error: unknown, requestId?: string): { problem: Problem; headers: Record<string, string> } {
  if (error instanceof HttpError) {
    const problem: Problem = { type: `/problems/${error.slug}`, title: error.title, status: error.status };
    if (error.detail !== undefined) problem.detail = error.detail;
    if (error.errors?.length) problem.errors = error.errors;
    if (requestId) problem.instance = `/requests/${requestId}`;
    return { problem, headers: error.headers ?? {} };
  }
  const problem: Problem = {
    type: '/problems/internal-error',
    title: 'Internal server error.',
    status: 500,
    detail: 'Something went wrong on our side. Quote the request id if you contact support.',
  };
  if (requestId) problem.instance = `/requests/${requestId}`;
  return { problem, headers: {} };
}

export function problemResponse(error: unknown, requestId?: string): APIGatewayProxyStructuredResultV2 {
  const { problem, headers } = toProblem(error, requestId);
  return {
    statusCode: problem.status,
    headers: { 'content-type': PROBLEM_CONTENT_TYPE, ...headers, ...(requestId ? { 'x-request-id': requestId } : {}) },
    body: JSON.stringify(problem),
  };
}
