/** A real SMTP server (smtp-server) on an ephemeral loopback port that keeps what it receives. */
import { SMTPServer } from 'smtp-server';

export interface SmtpSink {
  readonly port: number;
  readonly mails: { to: string; text: string }[];
  /** The first mail to `to` (raw message text), taken off the list; waits up to ~2 s. */
  take(to: string): Promise<string>;
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const mails: { to: string; text: string }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        for (const r of session.envelope.rcptTo) mails.push({ to: r.address, text });
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.server.address() as { port: number }).port,
    mails,
    take: async (to) => {
      for (let i = 0; i < 200; i++) {
        const m = mails.find((x) => x.to === to);
        if (m !== undefined) {
          mails.splice(mails.indexOf(m), 1);
          return m.text;
        }
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`no mail to ${to}`);
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
