#!/usr/bin/env bash
# summary.sh: the summary of a campaign's results.tsv (fuzz/campaign.sh): cases per class, per
# class and dtype, per operator family x class, clean refusals by reason (names and numbers
# replaced by N / "L"), the lowest cosine per dtype among PASS cases, and the failing seeds.
# usage: summary.sh results.tsv
R=$1
awk -F'\t' 'NR>1' "$R" >"$R.body"
echo "== cases: $(wc -l <"$R.body")"
echo "== by class"; cut -f6 "$R.body" | sort | uniq -c | sort -rn
echo "== by class and dtype"; awk -F'\t' '{print $6, $2}' "$R.body" | sort | uniq -c | sort -k2,2 -k1,1rn
echo "== by family (cases containing it: total, then per class)"
awk -F'\t' '{n=split($4,f,","); for(i=1;i<=n;i++){t[f[i]]++; c[f[i]" "$6]++}} END{for(k in t){line=sprintf("%-15s %5d", k, t[k]); for(kc in c){split(kc,p," "); if(p[1]==k) line=line sprintf("  %s=%d", p[2], c[kc])} print line}}' "$R.body" | sort -k2,2nr
echo "== clean refusals by reason"
awk -F'\t' '$6=="REFUSED"{print $7}' "$R.body" | sed -E 's/"[^"]*"/"L"/g; s/[0-9]+/N/g' | sort | uniq -c | sort -rn
echo "== lowest cosine (Tpu vs Top) per dtype, PASS cases"
awk -F'\t' '$6=="PASS" && $8!="-"{if(!($2 in m) || $8+0<m[$2]+0){m[$2]=$8; s[$2]=$1}} END{for(k in m) print k, m[k], "seed", s[k]}' "$R.body" | sort
echo "== failures by class, dtype and the op of the first differing tensor (run_case.sh triage)"
awk -F'\t' '$6!="PASS" && $6!="REFUSED"{t=$7; if (match(t, /\[[^]]*\]$/)) t=substr(t, RSTART); else if ($6=="MISMATCH") t="?"; else {gsub(/"[^"]*"/, "\"L\"", t); gsub(/[0-9]+/, "N", t); t=substr(t, 1, 90)} print $6, $2, t}' "$R.body" | sort | uniq -c | sort -k2,2 -k1,1rn
echo "== failures (class, seed, reason)"
awk -F'\t' '$6!="PASS" && $6!="REFUSED"{print $6"\t"$1"\t"$2"\t"$7}' "$R.body" | sort | cut -c1-260
rm -f "$R.body"
