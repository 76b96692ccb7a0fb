/* lakemark lineage report: an index of jobs and datasets (searchable) and, for the selection,
   its upstream/downstream graph (job -> dataset -> column) laid out by dagre. Names are data:
   they reach the page as text nodes and attribute values only. */
const NSVG="http://www.w3.org/2000/svg";
const $=id=>document.getElementById(id);
const view=$("view"),svg=$("graph"),side=$("side"),sel=$("job"),depthSel=$("depth"),qBox=$("q");
const MAXCOLS=40,MAXNODES=250,OVERVIEW=80,MINSCALE=0.7;
function el(n,a,p){const e=document.createElementNS(NSVG,n);for(const k in a)e.setAttribute(k,a[k]);p.appendChild(e);return e}
function short(s,n){return s.length>n?s.slice(0,n-1)+"\u2026":s}
function addTo(m,k,v){let s=m.get(k);if(!s){s=new Set();m.set(k,s)}s.add(v)}

// -- the graph of jobs and datasets -----------------------------------------------------------
const DS=new Map(D.datasets.map(d=>[d.key,d]));
const JIN=new Map(),JOUT=new Map(),READ=new Map(),WRITE=new Map();
for(const j of D.jobs){JIN.set(j,new Set());JOUT.set(j,new Set())}
for(const d of D.datasets){
 for(const j of d.readers){addTo(JIN,j,d.key);addTo(READ,d.key,j)}
 for(const j of d.writers){addTo(JOUT,j,d.key);addTo(WRITE,d.key,j)}}
function preds(id){const k=id.slice(2);
 return id[0]==="d"?[...(WRITE.get(k)||[])].map(j=>"j:"+j):[...(JIN.get(k)||[])].map(d=>"d:"+d)}
function succs(id){const k=id.slice(2);
 return id[0]==="d"?[...(READ.get(k)||[])].map(j=>"j:"+j):[...(JOUT.get(k)||[])].map(d=>"d:"+d)}
const ALL=[...D.jobs.map(j=>"j:"+j),...D.datasets.map(d=>"d:"+d.key)];
/* the selection and what is upstream and downstream of it, up to `depth` jobs away (0: all);
   breadth first, so a cut (at MAXNODES) keeps the nearest nodes */
function neighbourhood(id,depth){
 if(!id)return{nodes:new Set(ALL),cut:0};
 const nodes=new Set([id]);let cut=0;
 for(const step of [preds,succs]){let front=[id],hops=0;
  while(front.length&&(!depth||hops<depth*2)){const next=[];
   for(const n of front)for(const m of step(n)){if(nodes.has(m))continue;
    if(nodes.size>=MAXNODES){cut++;continue}nodes.add(m);next.push(m)}
   front=next;hops++}}
 return{nodes,cut}}

// -- column lineage (for a clicked column) ----------------------------------------------------
const INTO=new Map(),OUTOF=new Map();
D.edges.forEach((e,i)=>{addTo(INTO,e.to+"\u0000"+e.tcol,i);addTo(OUTOF,e.from+"\u0000"+e.fcol,i)});
function columnLineage(port){const seen=new Set();
 for(const [m,end] of [[INTO,e=>e.from+"\u0000"+e.fcol],[OUTOF,e=>e.to+"\u0000"+e.tcol]]){
  const todo=[port],done=new Set();
  while(todo.length){const p=todo.pop();if(done.has(p))continue;done.add(p);
   for(const i of m.get(p)||[]){seen.add(i);if(m===INTO||D.edges[i].tcol)todo.push(end(D.edges[i]))}}}
 return seen}

// -- the index --------------------------------------------------------------------------------
const items=[];
function section(title,list,cls,id,text,hay){
 const h=document.createElement("h3");h.textContent=`${title} (${list.length})`;side.appendChild(h);
 const ul=document.createElement("ul");ul.id=cls==="job"?"jobs":"datasets";side.appendChild(ul);
 for(const x of list){const li=document.createElement("li");li.className=cls;li.dataset.id=id(x);
  li.textContent=text(x);li.title=id(x).slice(2);ul.appendChild(li);items.push([li,hay(x).toLowerCase()]);
  li.onclick=()=>select(li.dataset.id)}}
const byName=(a,b)=>a<b?-1:a>b?1:0;
section("Jobs",[...D.jobs].sort(byName),"job",j=>"j:"+j,j=>j,j=>j);
section("Datasets",[...D.datasets].sort((a,b)=>byName(a.label,b.label)),"ds",d=>"d:"+d.key,d=>d.label,d=>d.label+"\n"+d.key+"\n"+d.cols.join("\n"));
for(const j of D.jobs){const o=document.createElement("option");o.value=o.textContent=j;sel.appendChild(o)}

// -- drawing ----------------------------------------------------------------------------------
let current=null,colOn=null,paths=[],vb=[0,0,1200,800];
function select(id){current=id;colOn=null;
 try{history.replaceState(null,"","#sel="+encodeURIComponent(id||"*"))}catch(e){}
 render()}
function render(){
 view.textContent="";paths=[];
 const depth=+depthSel.value,{nodes,cut}=neighbourhood(current,depth);
 const g=new dagre.graphlib.Graph();
 g.setGraph({rankdir:"LR",nodesep:18,ranksep:60,marginx:20,marginy:20});
 g.setDefaultEdgeLabel(()=>({}));
 for(const id of nodes){
  if(id[0]==="d"){const d=DS.get(id.slice(2)),n=Math.min(d.cols.length,MAXCOLS)+(d.cols.length>MAXCOLS?1:0);
   g.setNode(id,{width:D.width,height:D.head+D.row*Math.max(1,n)})}
  else g.setNode(id,{width:Math.min(240,24+7*id.length),height:28})}
 for(const id of nodes)if(id[0]==="j"){const j=id.slice(2);
  for(const k of JIN.get(j))if(nodes.has("d:"+k))g.setEdge("d:"+k,id);
  for(const k of JOUT.get(j))if(nodes.has("d:"+k)&&!g.hasEdge(id,"d:"+k))g.setEdge(id,"d:"+k)}
 dagre.layout(g);
 const links=el("g",{},view),edgeLayer=el("g",{},view),pos={},jobBox={};
 for(const e of g.edges()){const pts=g.edge(e).points;if(!pts)continue;
  el("path",{class:"link",d:"M"+pts.map(p=>p.x.toFixed(1)+","+p.y.toFixed(1)).join(" L")},links)}
 for(const id of nodes){const n=g.node(id),x=n.x-n.width/2,y=n.y-n.height/2;
  if(id[0]==="j"){const j=id.slice(2);jobBox[j]=[x,n.x+n.width/2,n.y];
   const jg=el("g",{class:"job"+(id===current?" focus":""),"data-job":j},view);
   el("rect",{x:x,y:y,width:n.width,height:n.height},jg);
   const t=el("text",{x:x+12,y:n.y+4},jg);t.textContent=short(j,Math.floor((n.width-18)/7));
   el("title",{},t).textContent="job "+j;jg.onclick=()=>select(id);continue}
  const d=DS.get(id.slice(2));
  const dg=el("g",{class:"ds"+(id===current?" focus":""),"data-key":d.key,"data-jobs":d.jobs.join("\n")},view);
  el("rect",{class:"box",x:x,y:y,width:n.width,height:n.height},dg);
  const hd=el("rect",{class:"hd",x:x,y:y,width:n.width,height:D.head},dg);hd.onclick=()=>select(id);
  const t=el("text",{x:x+6,y:y+16,"font-weight":"bold"},dg);t.textContent=short(d.label,34);
  el("title",{},t).textContent=d.key;
  d.cols.slice(0,MAXCOLS).forEach((c,i)=>{const cy=y+D.head+D.row*i;
   const cg=el("g",{class:"col","data-name":c.toLowerCase()},dg);
   const ct=el("text",{x:x+12,y:cy+13},cg);ct.textContent=short(c,36);el("title",{},ct).textContent=c;
   const port=d.key+"\u0000"+c;cg.onclick=ev=>{ev.stopPropagation();colOn=colOn===port?null:port;apply()};
   pos[port]={x:x,y:cy+D.row/2}});
  if(d.cols.length>MAXCOLS){const cg=el("g",{class:"col more","data-name":""},dg);
   el("text",{x:x+12,y:y+D.head+D.row*MAXCOLS+13},cg).textContent=`+${d.cols.length-MAXCOLS} more columns`}
  pos[d.key+"\u0000"]={x:x,y:y+D.head/2}}
 D.edges.forEach((e,i)=>{
  if(!nodes.has("d:"+e.from)||!nodes.has("d:"+e.to)||!nodes.has("j:"+e.job))return;
  const a=pos[e.from+"\u0000"+e.fcol]||pos[e.from+"\u0000"],b=pos[e.to+"\u0000"+e.tcol]||pos[e.to+"\u0000"];
  const [jl,jr,jy]=jobBox[e.job],x1=a.x+D.width,x2=b.x,m1=(x1+jl)/2,m2=(jr+x2)/2;
  const p=el("path",{class:"e "+e.type+" "+e.kind+(e.unsure?" unsure":""),
   d:`M${x1},${a.y} C${m1},${a.y} ${m1},${jy} ${jl},${jy} L${jr},${jy} C${m2},${jy} ${m2},${b.y} ${x2},${b.y}`,"data-i":i},edgeLayer);
  el("title",{},p).textContent=`${e.unsure?"UNCERTAIN edge\n":""}${e.from}.${e.fcol} -> ${e.to}.${e.tcol||"(dataset)"}\n${e.type} ${e.kind}${e.desc?": "+e.desc:""}\njob ${e.job}, line ${e.line}`;
  paths.push([p,e,i])});
 /* fit the graph to the window, but never below a readable scale: then centre the selection */
 const gr=g.graph(),gw=Math.max(gr.width||0,400),gh=Math.max(gr.height||0,300);
 const cw=svg.clientWidth||1100,ch=svg.clientHeight||800,fit=Math.min(cw/gw,ch/gh,1.5);
 if(fit>=MINSCALE)vb=[0,0,Math.ceil(cw/fit),Math.ceil(ch/fit)];
 else{const f=current&&g.node(current)||{x:gw/2,y:gh/2},w=cw/MINSCALE,h=ch/MINSCALE;
  vb=[Math.round(Math.max(0,Math.min(f.x-w/2,gw-w))),Math.round(Math.max(0,Math.min(f.y-h/2,gh-h))),Math.ceil(w),Math.ceil(h)]}
 setvb();
 for(const [li] of items)li.classList.toggle("sel",li.dataset.id===current);
 const what=!current?"all jobs and datasets":(current[0]==="j"?"job ":"dataset ")+current.slice(2);
 $("where").textContent=`${what}: ${nodes.size} nodes`+(cut?`, ${cut} more not shown (narrow the depth)`:"");
 const w=$("warn");w.textContent="";
 for(const x of D.warnings)if(nodes.has("j:"+x.job)){const div=document.createElement("div");
  div.textContent="warning "+x.job+": "+x.text;w.appendChild(div)}
 apply()}
function apply(){
 const q=qBox.value.trim().toLowerCase(),job=sel.value,lin=colOn?columnLineage(colOn):null;let n=0;
 for(const [li,hay] of items)li.classList.toggle("hide",!!q&&!hay.includes(q));
 for(const [p,e,i] of paths){const inJob=!job||e.job===job;
  const hit=!!q&&((e.fcol+" "+e.tcol+" "+e.from+" "+e.to).toLowerCase().includes(q));
  const onCol=!lin||lin.has(i);
  p.classList.toggle("dim",!inJob||(!!q&&!hit)||!onCol);p.classList.toggle("hit",inJob&&(hit||(!!lin&&onCol)));
  if(inJob&&(!q||hit)&&onCol)n++}
 for(const g of view.querySelectorAll("g.ds")){const js=g.dataset.jobs.split("\n");
  g.classList.toggle("dim",!!job&&!js.includes(job));
  for(const c of g.querySelectorAll("g.col")){c.classList.toggle("hit",!!q&&!!c.dataset.name&&c.dataset.name.includes(q));
   c.classList.toggle("on",!!colOn&&colOn===g.dataset.key+"\u0000"+(c.querySelector("title")||{}).textContent)}}
 for(const g of view.querySelectorAll("g.job"))g.classList.toggle("dim",!!job&&g.dataset.job!==job);
 $("count").textContent=n+" edges"}
qBox.oninput=apply;sel.onchange=apply;depthSel.onchange=render;
$("all").onclick=()=>select(null);
if(ALL.length>400)$("all").textContent="whole graph (slow)";

// -- pan and zoom -----------------------------------------------------------------------------
let drag=null;
function setvb(){svg.setAttribute("viewBox",vb.join(" "))}
svg.onmousedown=e=>{drag=[e.clientX,e.clientY]};window.onmouseup=()=>drag=null;
window.onmousemove=e=>{if(!drag)return;const s=vb[2]/(svg.clientWidth||1);vb[0]-=(e.clientX-drag[0])*s;vb[1]-=(e.clientY-drag[1])*s;drag=[e.clientX,e.clientY];setvb()};
svg.onwheel=e=>{e.preventDefault();const f=e.deltaY>0?1.1:0.9;vb[2]*=f;vb[3]*=f;setvb()};

// -- the first view: the one in the address (#sel=...), else everything when it is small,
// else the first job ------------------------------------------------------------------------
(function(){const m=/^#sel=(.*)$/.exec(location.hash);let id=m?decodeURIComponent(m[1]):null;
 if(id==="*")id=null;
 else if(id&&!(id[0]==="j"?JIN.has(id.slice(2)):DS.has(id.slice(2))))id=null;
 if(!m&&ALL.length>OVERVIEW)id=D.jobs.length?"j:"+D.jobs[0]:"d:"+D.datasets[0].key;
 current=id;render()})();
