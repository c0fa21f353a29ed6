import { Logger } from '@aws-lambda-powertools/logger';

/** One structured JSON logger per container (Powertools). Level from POWERTOOLS_LOG_LEVEL / LOG_LEVEL. */
export const logger = new Logger({ serviceName: 'burnrate' });
