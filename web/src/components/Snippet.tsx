import { markParts } from "../transcript";

export function Snippet({ text }: { text: string }) {
  return (
    <span className="snippet">
      {markParts(text).map((part, i) => (part.match ? <mark key={i}>{part.text}</mark> : <span key={i}>{part.text}</span>))}
    </span>
  );
}
