/** The columns the renderer needs; a Prisma `Task` row satisfies it. */
export interface RenderableTask {
  id: string;
  model: string;
  status: string;
  createdAt: Date;
  output: unknown;
  errorCode: number | null;
  errorMessage: string | null;
  chargedCredits: number | null;
  reservedCredits: number;
  refundedCredits: number | null;
  billingMethod: string;
  tokensInput: number | null;
  tokensOutput: number | null;
}

/** A Prisma `WebhookDelivery` row plus the attempt that first delivered it. */
export interface RenderableDelivery {
  status: string;
  attempts: number;
  responseStatus: number | null;
  lastError: string | null;
  lastAttemptAt: Date | null;
  deliveredAt: Date | null;
  /** The first attempt answered with a 2xx (its attempt-log row), or null if none was. */
  deliveredBy: DeliveringAttempt | null;
}

export interface DeliveringAttempt {
  attemptNo: number;
  startedAt: Date;
  finishedAt: Date | null;
  responseStatus: number | null;
}
