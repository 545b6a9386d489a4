"""The status page: Leela Zero's front page, small, with the Elo graph as an inline SVG picture."""

from __future__ import annotations

import html

MATCH_STATES = {"H1": "PASS", "H0": "fail"}  # SPRT decisions as the status page shows them


def elo_graph_svg(networks: list[dict], width: int = 640, height: int = 320) -> str:
    """The Elo of each rated net against its number, as an inline SVG line with error bars."""
    points = [(n["number"], n["elo"]) for n in networks if n["elo"] is not None]
    pad = 40
    if not points:
        return (f'<svg id="elo-graph" width="{width}" height="{height}" role="img">'
                f'<text x="{pad}" y="{height // 2}">no rated networks yet</text></svg>')
    xs = [x for x, _ in points]
    ys = [v for _, e in points for v in e]
    x0, x1 = min(xs), max(max(xs), min(xs) + 1)
    y0, y1 = min(ys + [0.0]), max(ys + [1.0])

    def sx(x: float) -> float:
        return pad + (x - x0) / (x1 - x0) * (width - 2 * pad)

    def sy(y: float) -> float:
        return height - pad - (y - y0) / (y1 - y0) * (height - 2 * pad)

    line = " ".join(f"{sx(x):.1f},{sy(e[0]):.1f}" for x, e in points)
    bars = "".join(f'<line x1="{sx(x):.1f}" y1="{sy(e[1]):.1f}" x2="{sx(x):.1f}" y2="{sy(e[2]):.1f}" '
                   f'stroke="#99b"/>' for x, e in points)
    dots = "".join(f'<circle cx="{sx(x):.1f}" cy="{sy(e[0]):.1f}" r="3" fill="#225"/>' for x, e in points)
    axes = (f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>'
            f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>'
            f'<text x="{width // 2 - 30}" y="{height - 8}">network number</text>'
            f'<text x="4" y="{pad - 10}">Elo ({y0:.0f} to {y1:.0f})</text>')
    return (f'<svg id="elo-graph" width="{width}" height="{height}" role="img" '
            f'aria-label="Elo of each network">{axes}{bars}'
            f'<polyline points="{line}" fill="none" stroke="#225" stroke-width="2"/>{dots}</svg>')


def game_title(game: dict) -> str:
    """``{'game': 'go', 'size': 9, 'komi': 7.5}`` as ``9x9 Go (komi 7.5)``."""
    komi = f" (komi {game['komi']:g})" if "komi" in game else ""
    return f"{game['size']}x{game['size']} {game['game'].capitalize()}{komi}"


def status_page(status: dict) -> str:
    """The HTML status page (Leela Zero's front page, small)."""
    e = html.escape
    best = status["best_network"] or "none"
    match_rows = "".join(
        f"<tr><td>{m['id']}</td><td>{e(m['candidate'][:8])}</td><td>{e(m['best'][:8])}</td>"
        f"<td>{m['wins']}-{m['losses']}</td><td>{m['llr']:.2f} ({m['lower']:.2f} .. {m['upper']:.2f})</td>"
        f"<td>{MATCH_STATES.get(m['decision'], 'running')}</td>"
        f"<td>{e(', '.join(f'{k} {v}' for k, v in sorted(m['contributors'].items())))}</td></tr>"
        for m in status["matches"])
    client_rows = "".join(
        f"<tr><td>{e(c['client'])}</td><td>{c['games']}</td><td>{c['positions']}</td><td>{c['match_games']}</td>"
        f"<td>{'revoked' if c['revoked'] else ''}</td></tr>"
        for c in status["clients"])
    held_rows = "".join(
        f"<tr><td>{h['match']}</td><td>{e(h['client'])}</td><td>{h['wins']} of {h['games']}</td>"
        f"<td>{h['others_wins']} of {h['others_games']}</td><td>{h['p_value']:.2g}</td>"
        f"<td>{e(h['state'])}</td></tr>"
        for h in status.get("held_results", []))
    net_rows = "".join(
        f"<tr><td>{n['number']}</td><td>{e(n['hash'][:8])}</td><td>{n['blocks']}x{n['filters']}</td>"
        f"<td>{n['training_steps']}</td><td>{'' if n['elo'] is None else n['elo'][0]}</td>"
        f"<td>{'best' if n['hash'] == status['best_network'] else ''}</td></tr>"
        for n in reversed(status["network_list"][-20:]))
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>zero9 server</title>
<style>body{{font-family:sans-serif;margin:2em}} td,th{{padding:2px 8px}}</style></head>
<body><h1>zero9: training one {e(game_title(status['game']))} net together</h1>
<p>Best network: <b id="best-network">{e(best)}</b> (Elo {status['best_elo']})</p>
<p>{status['games']} self-play games ({status['games_last_hour']} in the last hour),
{status['match_games']} match games, {status['networks']} networks,
{status['clients_last_hour']} clients in the last hour.</p>
<h2>Elo (the start net = 0)</h2>
{elo_graph_svg(status['network_list'])}
<h2>Matches (SPRT elo0=0, elo1={status['elo1']:g})</h2>
<table id="matches"><tr><th>#</th><th>candidate</th><th>best</th><th>W-L</th><th>LLR (bounds)</th>
<th>state</th><th>games by client</th></tr>{match_rows}</table>
<h2>Held match results</h2>
<p>A client whose record in a match is improbable against the other clients' (Fisher's exact test)
has its results held out of the count until the teacher runs
<code>zero9 server RUN_DIR clients accept NAME</code> or <code>clients drop NAME</code>.</p>
<table id="held"><tr><th>match</th><th>client</th><th>candidate won</th><th>the others: candidate won</th>
<th>p</th><th>state</th></tr>{held_rows}</table>
<h2>Contributions</h2>
<table id="clients"><tr><th>client</th><th>self-play games</th><th>positions</th><th>match games</th><th></th>
</tr>{client_rows}</table>
<h2>Recent networks</h2>
<table id="networks"><tr><th>#</th><th>hash</th><th>size</th><th>steps</th><th>Elo</th><th></th></tr>
{net_rows}</table></body></html>
"""

