// About 40,000 answers of a typical 800 B; a single answer over a tenth of the budget (a long text
// output) is not kept, so a few large tasks cannot push out everything else.
const MAX_BYTES = 32 * 1024 * 1024;
const MAX_ENTRY_BYTES = MAX_BYTES / 10;
// Map entry, key string and object headers, roughly.
const ENTRY_OVERHEAD_BYTES = 120;

interface Answer {
  userId: string;
  body: string;
}

/**
 * Rendered `GET /api/v1/tasks/{id}` bodies that can never change again (read-task.ts decides which),
 * by task id and `include`, with the owner so another user's poll still answers 40001. Nothing in
 * it can go stale, so each gateway process keeping its own copy shows every client the same thing.
 * Bounded by bytes (string length plus overhead), least recently used first out.
 */
export class FinishedTaskCache {
  private readonly answers = new Map<string, Answer>();
  private bytes = 0;

  get size(): number {
    return this.answers.size;
  }

  get(key: string): Answer | undefined {
    const answer = this.answers.get(key);
    if (answer === undefined) return undefined;
    this.answers.delete(key);
    this.answers.set(key, answer);
    return answer;
  }

  set(key: string, answer: Answer): void {
    const size = cost(key, answer);
    if (size > MAX_ENTRY_BYTES) return;
    const previous = this.answers.get(key);
    if (previous !== undefined) {
      this.answers.delete(key);
      this.bytes -= cost(key, previous);
    }
    this.answers.set(key, answer);
    this.bytes += size;
    for (const [oldKey, oldAnswer] of this.answers) {
      if (this.bytes <= MAX_BYTES) break;
      this.answers.delete(oldKey);
      this.bytes -= cost(oldKey, oldAnswer);
    }
  }
}

function cost(key: string, answer: Answer): number {
  return key.length + answer.userId.length + answer.body.length + ENTRY_OVERHEAD_BYTES;
}
