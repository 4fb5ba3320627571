// Markdown from a transcript, drawn safely and in bounded time: GFM (tables, task lists,
// strikethrough), links that open without a Referer, images that never load from another
// host (a transcript author must not learn when or where it is read: a remote image is a link
// to click), code highlighted only in texts small enough for it, and a huge text shown as a
// plain prefix with "Show all" (a 5 MB message would otherwise hold the main thread for
// seconds in the Markdown parser and the highlighter).
import { memo, useState } from "react";
import Markdown, { type Components, defaultUrlTransform } from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import remarkGfm from "remark-gfm";

/** Over this many characters a text is drawn without code highlighting. */
export const HIGHLIGHT_LIMIT = 20_000;
/** Over this many characters a text starts as a plain prefix of this size, with "Show all". */
export const PLAIN_LIMIT = 60_000;

// rehype-highlight colours only code blocks (<pre><code>), and react-markdown builds its
// plugins again on every draw: rehype-highlight registers ~37 languages each time. So it is
// given only to a text that has a block a fence or an indent can open (a superset: a text it
// matches by mistake is merely highlighted for nothing).
const CODE_BLOCK = /```|~~~|^(?: {4}|\t)/m;

/** Whether `text` is drawn with code highlighting. */
export function highlighted(text: string): boolean {
  return text.length <= HIGHLIGHT_LIMIT && CODE_BLOCK.test(text);
}

/** Whether an image source may be drawn inline: only data the transcript itself carries. */
export function inlineImage(src: string | undefined): boolean {
  return typeof src === "string" && /^data:image\/(png|jpeg|gif|webp);/i.test(src);
}

// react-markdown drops unsafe schemes (javascript:, vbscript:, data:); data images stay.
function urlTransform(url: string, key: string): string {
  return key === "src" && inlineImage(url) ? url : defaultUrlTransform(url);
}

// A transcript's own headings sit under the page's: # is drawn as a level-3 heading.
const COMPONENTS: Components = {
  h1: ({ node: _node, ...rest }) => <h3 {...rest} />,
  h2: ({ node: _node, ...rest }) => <h4 {...rest} />,
  h3: ({ node: _node, ...rest }) => <h5 {...rest} />,
  h4: ({ node: _node, ...rest }) => <h6 {...rest} />,
  a: ({ node: _node, href, children, ...rest }) => (
    <a {...rest} href={href} target="_blank" rel="noreferrer noopener">
      {children}
    </a>
  ),
  img: ({ node: _node, src, alt }) => {
    const source = typeof src === "string" ? src : undefined;
    if (inlineImage(source)) return <img src={source} alt={alt ?? ""} />;
    return (
      <a className="remote-image" href={source} target="_blank" rel="noreferrer noopener" title="a remote image: not loaded until you open it">
        🖼 {alt || "image"} <span className="remote-host">({hostOf(source)})</span>
      </a>
    );
  },
};

function hostOf(src: string | undefined): string {
  try {
    return new URL(src ?? "", window.location.href).host || "link";
  } catch {
    return "link";
  }
}

export function size(n: number): string {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MB` : n >= 1024 ? `${Math.round(n / 1024)} KB` : `${n} characters`;
}

/** A long plain text (a tool's output): its first `limit` characters, and "Show all". */
export function LongText({ text, limit = PLAIN_LIMIT, className }: { text: string; limit?: number; className?: string }) {
  const [all, setAll] = useState(false);
  if (text.length <= limit || all) return <pre className={className}>{text}</pre>;
  return (
    <>
      <pre className={className}>{text.slice(0, limit)}</pre>
      <button className="link show-all" onClick={() => setAll(true)}>
        Show all ({size(text.length)}; {size(text.length - limit)} more)
      </button>
    </>
  );
}

export const Md = memo(function Md({ text }: { text: string }) {
  const [all, setAll] = useState(false);
  if (text.length > PLAIN_LIMIT) {
    // Past the limit it stays plain text even when shown whole: parsing it is the cost.
    return (
      <div className="md long">
        <pre className="plain">{all ? text : text.slice(0, PLAIN_LIMIT)}</pre>
        {all ? null : (
          <button className="link show-all" onClick={() => setAll(true)}>
            Show all ({size(text.length)}; shown as plain text)
          </button>
        )}
      </div>
    );
  }
  return (
    <div className="md">
      <Markdown remarkPlugins={[remarkGfm]} rehypePlugins={highlighted(text) ? [rehypeHighlight] : []} components={COMPONENTS} urlTransform={urlTransform}>
        {text}
      </Markdown>
    </div>
  );
});
