import math, statistics
from episeg.recall.candidates import Candidate
from episeg.recall.ranking import card_retention
from episeg.recall.hits import Expand

def fuse2(params, dense, lexical, index):
    rrf = params.rrf_k + 1
    cands = {}
    get = cands.get
    for rank, (episode_id, pos, cos) in enumerate(dense):
        key = (episode_id, pos)
        c = get(key)
        if c is None:
            cands[key] = Candidate(1.0 / (rrf + rank), cos)
        else:
            c.fused += 1.0 / (rrf + rank)
            c.cosine = cos
    turns, episodes = lexical
    for rank, key in enumerate(turns):
        c = get(key)
        if c is None:
            cands[key] = Candidate(1.0 / (rrf + rank), None, True)
        else:
            c.fused += 1.0 / (rrf + rank)
            c.lexical = True
    rank = 0
    cards = index.cards
    for episode_id in episodes:
        n_turns = len(cards[episode_id].words)
        here = [get((episode_id, q)) for q in range(n_turns)]
        order = sorted(range(n_turns), key=lambda q: (-(here[q].fused if here[q] is not None else 0.0), q)) if n_turns > 1 else range(n_turns)
        for pos in order:
            c = here[pos]
            if c is None:
                cands[(episode_id, pos)] = Candidate(1.0 / (rrf + rank))
            else:
                c.fused += 1.0 / (rrf + rank)
            rank += 1
    return cands, set(episodes)

def rank2(cands, cards, config, weights, *, now, n_lists):
    p = config.recall
    w_rec, w_imp, w_rel = p.weights if weights is None else weights
    found = [cards[e] for e in {e for e, _ in cands}]
    fill = 0.0
    if w_imp:
        known = [c.importance for c in found if c.importance is not None]
        fill = statistics.median(known) if known else 0.0
    w_reinf = p.reinforcement_weight
    extras = {}
    tie = {}
    for card in found:
        recency = 0.0
        if w_rec:
            ref = card.last_accessed if card.last_accessed is not None else card.closed_at
            recency = p.recency_base ** (max(0.0, now - ref) / 3600.0)
        imp = card.importance
        reinf = 0.0
        if w_reinf and card.recall_count > 0:
            reinf = w_reinf * card_retention(card, config, now)
        extra = w_rec * recency, w_imp * (fill if imp is None else imp), reinf, imp is None
        extras[card.id] = extra
        tie[card.id] = (extra[0], extra[1], extra[2], -(imp or 0.0), -card.closed_at)
    scale = (p.rrf_k + 1) / n_lists
    rows = []
    append = rows.append
    for key, c in cands.items():
        rec, imp, reinf, first, second = tie[key[0]]
        relevance = w_rel * c.fused * scale
        append((-(relevance + rec + imp + reinf), first, second, key, relevance))
    rows.sort()
    return [(-r[0], r[4], r[3]) for r in rows], extras
