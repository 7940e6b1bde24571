// The html tag escapes by default: everything interpolated is text unless it is markup the tag made or
// raw() marked trusted.
import { describe, expect, test } from 'bun:test'
import { escapeHtml, Html, html, joinHtml, raw, xmlAttribute } from '../../../shared/lib/html.ts'

describe('html`...`', () => {
  test('escapes the five markup characters of every interpolated value', () => {
    const evil = `"><script>alert('x')</script>&`
    expect(String(html`<a title="${evil}">${evil}</a>`)).toBe(
      '<a title="&quot;&gt;&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&amp;">&quot;&gt;&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&amp;</a>',
    )
  })

  test('keeps markup built by html`...` or marked raw, and never escapes it twice', () => {
    const inner = html`<b>${'a<b'}</b>`
    expect(String(html`<p>${inner}${raw('<i>trusted</i>')}</p>`)).toBe('<p><b>a&lt;b</b><i>trusted</i></p>')
  })

  test('joins arrays, renders null, undefined and false as nothing, and numbers and true as text', () => {
    const items = ['<x>', html`<li>y</li>`, null, ['z']]
    expect(String(html`<ul>${items}</ul>${null}${undefined}${false}${0}${true}`)).toBe('<ul>&lt;x&gt;<li>y</li>z</ul>0true')
  })

  test('joinHtml keeps the markup of its items and escapes the separator', () => {
    expect(String(joinHtml([html`<a>1</a>`, html`<a>2</a>`], ' & '))).toBe('<a>1</a> &amp; <a>2</a>')
  })

  test('an Html is an object a plain string cannot pass for', () => {
    expect(html`x`).toBeInstanceOf(Html)
    expect(escapeHtml('<&>')).toBe('&lt;&amp;&gt;')
  })

  test('a pasted XML attribute keeps its apostrophes readable and cannot end its quotes', () => {
    expect(xmlAttribute(`default-src 'self' "x" <a & b>`)).toBe("default-src 'self' &quot;x&quot; &lt;a &amp; b>")
  })
})
