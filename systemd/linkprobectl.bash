# SPDX-License-Identifier: LGPL-2.1-or-later
# bash completion for linkprobectl(1); installed as bash-completion/completions/linkprobectl.
# Self-contained: it needs nothing from the bash-completion package beyond loading this file.

_linkprobectl() {
        local verbs='status list show monitor thunderbolt tree rdma gpu topo peers probe inhibit inhibitors metrics snapshot fabric health switches lldp'
        local options='--json --json= --no-legend --no-pager --color= --full --all --system --user --bus-address= --private-socket= --help --version --transport= --timeout= --what= --who= --why= --dot --prometheus= --prometheus-ca-file= --prometheus-user= --prometheus-password-file= --prometheus-token-file= --tolerance= --list --snapshots --nodes= --hostfile= --backend= --svg --png --output= --format= --slurm='
        local -a args bus_args=()
        local cur i verb='' sub='' snapshots=''
        [[ " ${COMP_LINE:0:COMP_POINT} " == *' --snapshots '* ]] && snapshots=1

        # Split the line ourselves, on blanks only: COMP_WORDS is also split at COMP_WORDBREAKS (= and :),
        # which would cut "--bus-address=unix:path=/run/x" into seven words.
        read -r -a args <<<"${COMP_LINE:0:COMP_POINT}"
        if [[ ${COMP_LINE:0:COMP_POINT} == *[[:blank:]] ]]; then
                args+=('')
        fi
        cur=${args[${#args[@]} - 1]}

        # The verb is the first word that is neither an option nor the value of "--bus-address ADDRESS";
        # the bus options are kept so that completing link names asks the same daemon.
        for ((i = 1; i < ${#args[@]} - 1; i++)); do
                case ${args[i]} in
                --bus-address)
                        bus_args+=("--bus-address=${args[i + 1]}")
                        ((i++))
                        ;;
                --bus-address=* | --private-socket=* | --user | --system) bus_args+=("${args[i]}") ;;
                --transport | --timeout | --color | --what | --who | --why | --prometheus | --tolerance | --nodes | --hostfile | --backend | --output | --format | --slurm) ((i++)) ;;
                --prometheus-ca-file | --prometheus-user | --prometheus-password-file | --prometheus-token-file) ((i++)) ;;
                -*) ;;
                *)
                        if [[ -z $verb ]]; then
                                verb=${args[i]}
                        elif [[ $verb == fabric && -z $sub ]]; then
                                sub=${args[i]}
                        fi
                        ;;
                esac
        done

        local prev=''
        ((${#args[@]} > 2)) && prev=${args[${#args[@]} - 2]}

        # A D-Bus address or a duration: nothing sensible to offer.
        if [[ $cur == --bus-address=* || $prev == --bus-address || $cur == --timeout=* || $prev == --timeout ]]; then
                COMPREPLY=()
        elif [[ $prev == --who || $prev == --why || $cur == --who=* || $cur == --why=* ]]; then
                COMPREPLY=()
        elif [[ $prev == --prometheus || $prev == --tolerance || $cur == --prometheus=* || $cur == --tolerance=* ]]; then
                COMPREPLY=()
        elif [[ $prev == --nodes || $cur == --nodes=* || $prev == --prometheus-user || $cur == --prometheus-user=* ]]; then
                COMPREPLY=()
        elif [[ $prev == --output ]]; then
                COMPREPLY=($(compgen -f -- "$cur"))
        elif [[ $cur == --output=* ]]; then
                COMPREPLY=($(compgen -f -P --output= -- "${cur#--output=}"))
        elif [[ $prev == --prometheus-ca-file || $prev == --prometheus-password-file || $prev == --prometheus-token-file ]]; then
                COMPREPLY=($(compgen -f -- "$cur"))
        elif [[ $cur == --prometheus-ca-file=* || $cur == --prometheus-password-file=* || $cur == --prometheus-token-file=* ]]; then
                COMPREPLY=($(compgen -f -P "${cur%%=*}=" -- "${cur#*=}"))
        elif [[ $prev == --slurm ]]; then
                COMPREPLY=($(compgen -f -- "$cur"))
        elif [[ $cur == --slurm=* ]]; then
                COMPREPLY=($(compgen -f -P --slurm= -- "${cur#--slurm=}"))
        elif [[ $prev == --format ]]; then
                COMPREPLY=($(compgen -W "slurm slurm-block k8s-labels json" -- "$cur"))
        elif [[ $cur == --format=* ]]; then
                COMPREPLY=($(compgen -W "--format=slurm --format=slurm-block --format=k8s-labels --format=json" -- "$cur"))
        elif [[ $prev == --hostfile ]]; then
                COMPREPLY=($(compgen -W "mlx" -- "$cur"))
        elif [[ $cur == --hostfile=* ]]; then
                COMPREPLY=($(compgen -W "--hostfile=mlx" -- "$cur"))
        elif [[ $prev == --backend ]]; then
                COMPREPLY=($(compgen -W "ring jaccl jaccl-ring" -- "$cur"))
        elif [[ $cur == --backend=* ]]; then
                COMPREPLY=($(compgen -W "--backend=ring --backend=jaccl --backend=jaccl-ring" -- "$cur"))
        elif [[ $prev == --transport ]]; then
                COMPREPLY=($(compgen -W "tcp rdma" -- "$cur"))
        elif [[ $cur == --transport=* ]]; then
                COMPREPLY=($(compgen -W "--transport=tcp --transport=rdma" -- "$cur"))
        elif [[ $prev == --what ]]; then
                COMPREPLY=($(compgen -W "gpu rdma gpu:rdma" -- "$cur"))
        elif [[ $cur == --what=* ]]; then
                COMPREPLY=($(compgen -W "--what=gpu --what=rdma --what=gpu:rdma" -- "$cur"))
        elif [[ $prev == --color ]]; then
                COMPREPLY=($(compgen -W "auto always never" -- "$cur"))
        elif [[ $cur == --color=* ]]; then
                COMPREPLY=($(compgen -W "--color=auto --color=always --color=never" -- "$cur"))
        elif [[ $cur == --json=* ]]; then
                COMPREPLY=($(compgen -W "--json=pretty --json=short --json=off" -- "$cur"))
        elif [[ $verb == probe && $prev == probe ]]; then
                COMPREPLY=($(compgen -W 'gpu' -- "$cur"))
        elif [[ $verb == fabric && -z $sub && $cur != -* ]]; then
                # "fabric ring", "coordinator", "topology", "verify"; with --snapshots, the snapshot files too.
                COMPREPLY=($(compgen -W 'ring coordinator topology verify' -- "$cur"))
                [[ -n $snapshots ]] && COMPREPLY+=($(compgen -f -- "$cur"))
        elif [[ $verb == fabric && -n $snapshots && $cur != -* ]]; then
                COMPREPLY=($(compgen -f -- "$cur"))
        elif [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "$options" -- "$cur"))
                if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]]; then
                        compopt -o nospace 2>/dev/null
                fi
        elif [[ -z $verb ]]; then
                COMPREPLY=($(compgen -W "$verbs" -- "$cur"))
        elif [[ $verb == show || $verb == list ]]; then
                # Link names from the daemon (NAME is the second column of `list`); nothing if it does not
                # answer within two seconds.
                local names
                names=$(timeout 2 linkprobectl "${bus_args[@]}" --no-legend list 2>/dev/null | awk '{ print $2 }')
                COMPREPLY=($(compgen -W "$names" -- "$cur"))
        else
                # Other arguments (addresses, inhibitor names) are not completed.
                COMPREPLY=()
        fi
        return 0
}

complete -F _linkprobectl linkprobectl
