import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';

/** A minimal API Gateway HTTP API v2 event. */
export function apiEvent(overrides: Partial<APIGatewayProxyEventV2> & { claims?: Record<string, unknown> } = {}): APIGatewayProxyEventV2 {
  const { claims, ...rest } = overrides;
  const event = {
    version: '2.0',
    routeKey: 'POST /api/test',
    rawPath: '/api/test',
    rawQueryString: '',
    headers: { 'content-type': 'application/json' },
    isBase64Encoded: false,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method: 'POST', path: '/api/test', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
      requestId: 'req-1',
      routeKey: 'POST /api/test',
      stage: '$default',
      time: '21/Nov/2026:22:00:00 +0000',
      timeEpoch: 0,
      ...(claims ? { authorizer: { jwt: { claims, scopes: null } } } : {}),
    },
    ...rest,
  };
  return event as APIGatewayProxyEventV2;
}

export const lambdaContext = {
  functionName: 'test',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:test',
  memoryLimitInMB: '512',
  awsRequestId: 'aws-req-1',
  logGroupName: 'test',
  logStreamName: 'test',
  callbackWaitsForEmptyEventLoop: false,
  getRemainingTimeInMillis: () => 10_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
} as unknown as Context;
